"""Benchmark: what the offline planner's briefs author on weather when every slot is its brief's own
skeleton, and an independent recomputation of every key from the series the item shows.

The plan is the one the planner falls back to (no model: `fallback_briefs` over `coverage_plan`
of the task); each brief's block call becomes the skeleton the generator is shown, which `itemsmith
verify` checks with every default stage (structure, audit, the stages whose models are installed).
Then 20 items of each accepted template are drawn (`check-template`) and each key is recomputed
here from the shown series alone, with scipy/numpy and none of itemsmith's blocks. Also prints the
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

import numpy as np
from scipy import stats

from itemsmith.agents.authoring.planner import fallback_briefs
from itemsmith.agents.authoring.prompts import brief_block, skeleton
from itemsmith.agents.authoring.taxonomy import coverage_plan
from itemsmith.agents.profile import profile_handler
from itemsmith.sandbox import SandboxPool

ITEMSMITH = str(Path(sys.executable).with_name("itemsmith"))


def _values(item: dict[str, Any], index: int = 0) -> np.ndarray:
    return np.array(item["series"][index]["values"], dtype=float)


def _trend(item: dict[str, Any]) -> str:
    v = _values(item)
    n = len(v)
    slope, _, low, high = stats.theilslopes(v, np.arange(n), alpha=0.90)
    resid = v - slope * np.arange(n)
    scatter = 1.4826 * np.median(np.abs(resid - np.median(resid)))
    ratio = abs(slope * (n - 1)) / scatter
    return f"{'rises' if slope > 0 else 'falls'} {'strongly' if ratio >= 3 else 'slightly'}"


def _unusual(item: dict[str, Any]) -> str:
    shown = item["series"][0]
    v, dates = np.array(shown["values"]), shown["timestamps"]
    size = 1 if "stretch" not in item["question"] else int(item["question"].split("stretches of ")[1].split()[0])
    spans = [(s, s + size) for s in range(0, len(v) - size + 1, size) if s >= 2 and s + size + 2 <= len(v)]
    far = [abs(v[a:b].mean() - np.median(np.r_[v[a - 2:a], v[b:b + 2]])) for a, b in spans]
    a, b = spans[int(np.argmax(far))]
    return dates[a] if size == 1 else f"{dates[a]} to {dates[b - 1]}"


def _most_variable(item: dict[str, Any]) -> str:
    spreads = {}
    for s in item["series"]:
        spreads[s["timestamps"][0]] = np.std(s["values"], ddof=1)
    first = max(spreads, key=spreads.__getitem__)
    return first  # compared with the option's record by its first date below


def _correlation(item: dict[str, Any]) -> str:
    r = np.corrcoef(_values(item, 0), _values(item, 1))[0, 1]
    if abs(r) < 0.2:
        return "no clear correlation"
    return f"{'strongly' if abs(r) >= 0.6 else 'weakly'} {'positive' if r > 0 else 'negative'}"


def _leads(item: dict[str, Any]) -> str:
    a, b = _values(item, 0), _values(item, 1)
    names = [s["name"] for s in item["series"]]
    best, lag_best = -2.0, 0
    for lag in range(-5, 6):
        x, y = (a[:-lag], b[lag:]) if lag > 0 else (a[-lag:], b[:lag]) if lag < 0 else (a, b)
        r = np.corrcoef(x, y)[0, 1]
        if r > best:
            best, lag_best = r, lag
    first, then = (names[0], names[1]) if lag_best >= 0 else (names[1], names[0])
    return f"{first} leads {then} by {abs(lag_best)} day(s)"


def _volatility(item: dict[str, Any]) -> str:
    v = _values(item)
    size = len(v) // 4
    spread = [np.std(np.diff(v[i * size:(i + 1) * size]), ddof=1) for i in range(4)]
    return f"the {('first', 'second', 'third', 'fourth')[int(np.argmax(spread))]} quarter"


def _most_alike(item: dict[str, Any]) -> str:
    ref = _values(item, 0)
    r = [np.corrcoef(ref, _values(item, i))[0, 1] for i in range(1, len(item["series"]))]
    return item["series"][1 + int(np.argmax(r))]["timestamps"][0]


def _level_shift(item: dict[str, Any]) -> str:
    shown = item["series"][0]
    v, dates = np.array(shown["values"]), shown["timestamps"]
    best, at = -1.0, 0
    for k in range(5, len(v) - 4):
        t = abs(stats.ttest_ind(v[:k], v[k:]).statistic)
        if t > best:
            best, at = t, k
    return dates[at]


RECOMPUTE = {"trend": _trend, "unusual day": _unusual, "compare more_variable": _most_variable,
             "correlation": _correlation, "leads": _leads, "volatility regime": _volatility,
             "most alike": _most_alike, "level shift": _level_shift}


def key_agrees(item: dict[str, Any]) -> bool | None:
    """Whether the key equals the recomputed answer (None: no recomputation for this kind of item)."""
    how = (item.get("metadata") or {}).get("block", "")
    how = "unusual day" if how.startswith("unusual") else how  # day, week, stretch: one recomputation
    if how not in RECOMPUTE:
        return None
    key = item["options"][item["answer_index"]]
    found = RECOMPUTE[how](item)
    if how in ("compare more_variable", "most alike"):  # options name records: match the record by its dates
        return found.startswith(key.removeprefix("record "))
    return key == found


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
