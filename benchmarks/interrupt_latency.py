"""Ctrl-C latency: how long a command takes to stop after SIGINT, and whether it says how to resume.

    python benchmarks/interrupt_latency.py [--cases author-local,author-scripted,verify-local]
                                           [--out benchmarks/results/interrupt_latency.json]

Each case starts a command in its own process group (as a terminal runs it), waits for a line that
shows the work is under way, sends SIGINT to the group (what Ctrl-C does) and measures the time
until every process of the group has exited; it records the exit code and whether the output holds
the resume hint. Cases:

- ``author-local``: `itemsmith author` with the local model (needs the `local` extra), interrupted
  while it plans (a llama.cpp call reading a prompt of some 4,500 tokens: minutes under load);
- ``author-scripted``: the same with a recorded-reply generator whose every call takes 600 s;
- ``verify-local``: `itemsmith verify` of a curated template with the local solver and judges,
  interrupted once its first stage is under way.

Prints one JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SLOW_GENERATOR = {"latency_s": 600, "replies": ["```python\ndef question(num_samples):\n    return []\n```"]}
PLANNER = {"replies": ['[{"title": "Mean level", "category": "arithmetic", "concept": "mean", "kind": "mc", '
                       '"question": "What is the mean of the series?", "answer_from": "the mean", "columns": []}]']}


def _itemsmith() -> str:
    return str(Path(sys.executable).with_name("itemsmith"))


def _cases(root: Path) -> dict[str, tuple[list[str], str, str]]:
    """name -> (command, a line fragment that shows the work is under way, the resume hint's fragment)."""
    (root / "slow.json").write_text(json.dumps(SLOW_GENERATOR))
    (root / "planner.json").write_text(json.dumps(PLANNER))
    author = [_itemsmith(), "author", "--handler", "synthetic", "--task", "levels of synthetic series",
              "--templates", "1", "--no-live", "--out", str(root / "out"), "--no-judges", "--no-students"]
    curated = Path(__file__).resolve().parents[1] / "templates_bank" / "curated" / "exam" / "exam_base_pattern.py"
    return {
        "author-local": ([*author, "--generator", "local:qwen2.5-coder-1.5b", "--run-id", "interrupt-local"],
                         "reading the prompt", "--run-id interrupt-local"),
        "author-scripted": ([*author, "--generator", f"scripted:{root / 'slow.json'}",
                             "--planner", f"scripted:{root / 'planner.json'}", "--run-id", "interrupt-scripted"],
                            "authoring", "--run-id interrupt-scripted"),
        "verify-local": ([_itemsmith(), "verify", str(curated), "--handler", "synthetic", "--no-students"],
                         " ...", "error: interrupted"),
    }


def _measure(command: list[str], started_when: str, hint: str, timeout_s: float) -> dict[str, Any]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    lines: list[str] = []
    under_way = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip())
            if started_when in line:
                under_way.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    if not under_way.wait(timeout_s):
        os.killpg(process.pid, signal.SIGKILL)
        return {"error": f"no {started_when!r} line in {timeout_s} s", "tail": lines[-15:]}
    time.sleep(2)  # well inside the call, not at its start
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    try:
        code = process.wait(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        code = None
    exited = time.monotonic()
    while True:  # every process of the group (sandbox workers included) is gone
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        if time.monotonic() - exited > 60:
            break
        time.sleep(0.05)
    reader.join(timeout=5)
    return {"under_way_after_s": round(sent - started, 1), "exit_s": round(exited - sent, 2),
            "group_gone_s": round(time.monotonic() - sent, 2), "exit_code": code,
            "resume_hint": any("interrupted" in line and hint in line for line in lines), "tail": lines[-4:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="author-scripted,author-local,verify-local")
    parser.add_argument("--start-timeout", type=float, default=600)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/interrupt_latency.json"))
    args = parser.parse_args()
    results: dict[str, Any] = {"load_1_5_15_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="itemsmith-interrupt-") as folder:
        cases = _cases(Path(folder))
        for name in args.cases.split(","):
            command, started_when, hint = cases[name]
            results[name] = _measure(command, started_when, hint, args.start_timeout)
            print(name, json.dumps(results[name]), file=sys.stderr)
    results["load_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
