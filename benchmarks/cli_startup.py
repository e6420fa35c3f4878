"""Start-up of the command line: ``itemsmith --help``, a command's ``--help`` and wrong command lines,
each a fresh process, against ``python -c "import typer"`` on the same machine in the same run.

    python benchmarks/cli_startup.py [--repeat 15] [--baseline COMMIT] [--out benchmarks/results/cli_startup.json]

The cases run interleaved, round after round, so that a change of load hits them alike; each
reports the median and the quartiles of its wall times, and its ratio to the Typer import's median
(the target: ``--help`` and a wrong command line each at most 2x). The service's start-up is timed
as the import of the API's app (what ``itemsmith serve`` loads before it listens) and of the Celery
app (``itemsmith worker``); with ``--baseline COMMIT`` the same two imports of that commit's
itemsmith (a ``git archive`` of it, ahead of this installation on ``PYTHONPATH``) run in the same
rounds, for a before/after on one machine. ``python -X importtime`` tells what a case loads.
Prints one JSON object and writes it to ``--out``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from release_speed import _code_tree

SERVICE = {"serve: import the API app": "import itemsmith.api.app",
           "worker: import the Celery app": "import itemsmith.service.jobs.celery_app"}


def _cases() -> dict[str, list[str]]:
    itemsmith = str(Path(sys.executable).with_name("itemsmith"))
    return {
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
        "itemsmith --help": [itemsmith, "--help"],
        "itemsmith author --help": [itemsmith, "author", "--help"],
        "itemsmith release export --help": [itemsmith, "release", "export", "--help"],
        "wrong: itemsmith autor": [itemsmith, "autor"],
        "wrong: author --templates 0": [itemsmith, "author", "--handler", "synthetic", "--task", "levels",
                                        "--templates", "0"],
        "wrong: author --handler nosuch": [itemsmith, "author", "--handler", "nosuch", "--task", "levels"],
        **{name: [sys.executable, "-c", statement] for name, statement in SERVICE.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--baseline", default=None, help="a commit whose service start-up is timed beside this one's")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cli_startup.json"))
    args = parser.parse_args()
    cases = _cases()
    envs: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="itemsmith-startup-") as folder:
        if args.baseline:
            tree = str(_code_tree(args.baseline, Path(folder)))
            for name, statement in SERVICE.items():
                cases[f"{name} ({args.baseline})"] = [sys.executable, "-c", statement]
                envs[f"{name} ({args.baseline})"] = {**os.environ, "PYTHONPATH": tree}
        _measure(args, cases, envs)


def _measure(args: argparse.Namespace, cases: dict[str, list[str]], envs: dict[str, dict[str, str]]) -> None:
    walls: dict[str, list[float]] = {name: [] for name in cases}
    codes: dict[str, int] = {}
    load_before = os.getloadavg()
    for _ in range(args.repeat):
        for name, command in cases.items():
            started = time.perf_counter()
            # from a neutral folder: in the repository, its own itemsmith/ folder would shadow PYTHONPATH's
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=envs.get(name),
                                  cwd=tempfile.gettempdir())
            walls[name].append(time.perf_counter() - started)
            codes[name] = done.returncode
    typer_median = statistics.median(walls["python -c 'import typer'"])
    result: dict[str, Any] = {"load_1_5_15_before": [round(x, 2) for x in load_before],
                              "load_1_5_15_after": [round(x, 2) for x in os.getloadavg()], "repeat": args.repeat,
                              "baseline": args.baseline}
    for name, times in walls.items():
        quartiles = statistics.quantiles(times, n=4)
        result[name] = {"median_ms": round(statistics.median(times) * 1000, 1),
                        "q1_ms": round(quartiles[0] * 1000, 1), "q3_ms": round(quartiles[2] * 1000, 1),
                        "x_typer": round(statistics.median(times) / typer_median, 2), "exit_code": codes[name]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
