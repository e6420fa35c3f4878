"""Benchmark: what the offline planner's briefs author on weather when every slot is its brief's own
skeleton, and an independent recomputation of every key from the series the item shows.

The plan is the one the planner falls back to (no model: `fallback_briefs` over `coverage_plan`
of the task); each brief's block call becomes the skeleton the generator is shown, which `itemsmith
verify` checks with every default stage (structure, audit, the stages whose models are installed).
Then 20 items of each accepted template are drawn (`check-template`) and each key is recomputed
here from the shown series alone by `author_keys.key_agrees` (scipy/numpy, none of itemsmith's blocks). Also prints the
plans of two task descriptions, to show that the task steers the plan.

    python benchmarks/reasoning_plan.py [--templates 6] [--task "..."] [--out DIR] [--plans-only]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from author_keys import key_agrees  # this folder's independent recomputation of block keys

from itemsmith.agents.authoring.planner import fallback_briefs
from itemsmith.agents.authoring.prompts import brief_block, skeleton
from itemsmith.agents.authoring.taxonomy import coverage_plan
from itemsmith.agents.profile import profile_handler
from itemsmith.sandbox import SandboxPool

ITEMSMITH = str(Path(sys.executable).with_name("itemsmith"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--templates", type=int, default=6)
    parser.add_argument("--handler", default="weather", help="a built-in handler or a handler .py file")
    parser.add_argument("--task", default="questions about Seattle's daily weather")
    parser.add_argument("--other-task", default="unusual days and extremes of Seattle's weather, and how "
                                                 "temperature and wind correlate")
    parser.add_argument("--out", type=Path, default=Path("/tmp/reasoning_plan"))
    parser.add_argument("--plans-only", action="store_true", help="print the two tasks' plans, verify nothing")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with SandboxPool(args.handler) as pool:
        profile = profile_handler(pool)
    for task in (args.task, args.other_task):
        plan = fallback_briefs(profile, coverage_plan(args.templates, task=task), task)
        print(f"plan for {task!r}: " + "; ".join(f"{b.category}: {brief_block(b.model_dump())}" for b in plan))
    if args.plans_only:
        return
    briefs = fallback_briefs(profile, coverage_plan(args.templates, task=args.task), args.task)
    rows = []
    for number, brief in enumerate(briefs):
        block = brief_block(brief.model_dump())
        path = args.out / f"{number:02d}_{brief.category}.py"
        path.write_text(skeleton(block=block, channel=brief.columns[0]) + "\n")
        started = time.monotonic()
        verify = subprocess.run([ITEMSMITH, "verify", str(path), "--handler", args.handler,
                                 "--json"], capture_output=True, text=True)
        verdict = json.loads(verify.stdout) if verify.stdout.strip().startswith("{") else {"raw": verify.stdout[-500:]}
        row: dict[str, Any] = {"category": brief.category, "block": block, "verify_exit": verify.returncode,
                               "verify_s": round(time.monotonic() - started, 1),
                               "verdict": {k: verdict.get(k) for k in ("accepted", "status", "decision", "stages")
                                           if k in verdict} or verdict}
        drawn = subprocess.run([ITEMSMITH, "check-template", str(path), "--handler",
                                args.handler, "--samples", "20", "--seed", "7", "--json"], capture_output=True, text=True)
        items = json.loads(drawn.stdout).get("items", []) if drawn.stdout.strip().startswith("{") else []
        agree = [key_agrees(item) for item in items]
        row.update(items=len(items), recomputed=sum(a is not None for a in agree), keys_agree=sum(a is True for a in agree),
                   categories=sorted({(i.get("metadata") or {}).get("category", "") for i in items}))
        rows.append(row)
        print(json.dumps(row), flush=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
