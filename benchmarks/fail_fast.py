"""Time to the first error: each mistake a user can make before a run starts, as a fresh
`itemsmith` process, from its start to its exit.

    python benchmarks/fail_fast.py [--repeat 3] [--out benchmarks/results/fail_fast.json]

Mistakes: a misspelt command, an option out of range, an unknown built-in handler, a task too short,
a handler file with a syntax error, a handler whose data cannot be read, a generator (or a judge)
without its API key, `verify` with a judge without its key, and an authoring run into a bank of
another handler. Each is run `--repeat` times (the median is reported) with the provider keys
removed from the environment; each records the exit code and the error's first words. Prints one
JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TYPO_HANDLER = "class H:\n    def records(self)\n        pass\n"
BROKEN_HANDLER = '''
import pandas as pd

class Broken:
    name = "broken"
    description = "a handler whose data cannot be read"

    def records(self):
        raise RuntimeError("the data folder is empty")

    def series(self, record_id):
        return pd.DataFrame()
'''


def _mistakes(root: Path) -> dict[str, list[str]]:
    itemsmith = str(Path(sys.executable).with_name("itemsmith"))
    (root / "typo.py").write_text(TYPO_HANDLER)
    (root / "broken.py").write_text(BROKEN_HANDLER)
    curated = Path(__file__).resolve().parents[1] / "templates_bank" / "curated" / "exam" / "exam_base_pattern.py"
    author = [itemsmith, "author", "--task", "levels of the series", "--out", str(root / "out"), "--no-live"]
    return {
        "misspelt command": [itemsmith, "autor", "--handler", "synthetic"],
        "option out of range": [*author, "--handler", "synthetic", "--templates", "0"],
        "unknown handler": [*author, "--handler", "synthetics"],
        "task too short": [itemsmith, "author", "--handler", "synthetic", "--task", "x", "--out", str(root / "out")],
        "handler syntax error": [*author, "--handler", str(root / "typo.py")],
        "handler data unreadable": [*author, "--handler", str(root / "broken.py"), "--generator",
                                    "local:smollm2-135m", "--no-judges", "--no-students"],
        "generator without its key": [*author, "--handler", "synthetic", "--generator", "openai:gpt-5-mini"],
        "judge without its key": [*author, "--handler", "synthetic", "--generator", "local:smollm2-135m",
                                  "--judge", "anthropic:claude-sonnet-4-5", "--no-students"],
        "verify: judge without its key": [itemsmith, "verify", str(curated), "--handler", "synthetic", "--judge",
                                          "openai:gpt-4o", "--no-students"],
        "bank of another handler": [*author, "--handler", str(root / "broken.py"), "--bank", "synthetic-bank",
                                    "--db", f"sqlite:///{root / 'bank.sqlite'}"],
    }


def _bank(root: Path) -> None:
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.storage import BankCreate, create_bank, open_session

    url = f"sqlite:///{root / 'bank.sqlite'}"
    upgrade_database(url)
    with open_session(url) as session:
        create_bank(session, BankCreate(name="synthetic-bank", handler="synthetic", owner="bench"))


def _run(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - started
    error = next((line for line in done.stderr.splitlines() if line.startswith(("error:", "Error:"))), "")
    return wall, done.returncode, error[:160]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fail_fast.json"))
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_OPENAI_API_KEY",
                        "ITEMSMITH_ANTHROPIC_API_KEY")}
    results: dict[str, Any] = {"load_1_5_15_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="itemsmith-fail-fast-") as folder:
        root = Path(folder)
        _bank(root)
        for name, command in _mistakes(root).items():
            runs = [_run(command, env) for _ in range(args.repeat)]
            results[name] = {"median_s": round(statistics.median(r[0] for r in runs), 2),
                             "runs_s": [round(r[0], 2) for r in runs], "exit_code": runs[-1][1], "error": runs[-1][2]}
            print(name, json.dumps(results[name]), file=sys.stderr)
    results["load_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
