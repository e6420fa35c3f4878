"""The re-derivation stage over the curated bank: per template, the solver's verdict (agrees /
disagrees / ambiguous / not re-derivable), its agreement over fresh draws, the tries it took, the
stage's wall time, and (with --show) one item where it did not agree and the program it wrote.

The solver is the stage's default (``ITEMSMITH_SOLVER``, else the generator a run would use: the
local qwen2.5-coder-1.5b offline) or ``--solver SPEC``; the draws and thresholds are the stage's
(``ITEMSMITH_REDERIVATION_*``). Note the machine's load (`uptime`) beside the times. Run by hand:

    python benchmarks/rederivation_curated.py                     # all 78, a markdown table on stdout
    python benchmarks/rederivation_curated.py --limit 10 --show   # the first ten, with disagreements
    python benchmarks/rederivation_curated.py exam_period feat_break_date --json out.json
    python benchmarks/rederivation_curated.py out/RUN/templates/*.py --handler weather --repeat 4

A template file (a path ending in .py) runs on `--handler`; `--repeat N` runs each template N times,
each on its own fresh draws (the items the solver sees differ between runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

from itemsmith.agents.model_factory import build_solver, retry_policy
from itemsmith.agents.rederivation import RederivationVerifier
from itemsmith.agents.settings import get_settings
from itemsmith.agents.specs import ModelSpec
from itemsmith.items.schema import RunStatus, StructureReport
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("templates", nargs="*", help="curated template ids or template .py files (default: all curated)")
    parser.add_argument("--handler", default="weather", help="the handler of template files (default: weather)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each template, each on fresh draws")
    parser.add_argument("--solver", type=ModelSpec.parse, help="solver model spec (default: the stage's default)")
    parser.add_argument("--limit", type=int, help="the first N templates only")
    parser.add_argument("--show", action="store_true", help="print each disagreement and its program")
    parser.add_argument("--json", type=Path, help="also write every report to this file")
    args = parser.parse_args()
    settings = get_settings()
    spec = args.solver or settings.solver or settings.default_generator()
    solver = build_solver(spec, settings=settings)
    files = [Path(name) for name in args.templates if name.endswith(".py")]
    templates = [(t.id, t.source, t.handler or "synthetic") for k, t in load_curated().items()
                 if not args.templates or k in args.templates]
    templates += [(path.stem, path.read_text(), args.handler) for path in files]
    templates = templates[:args.limit] if args.limit else templates
    runs = [(f"{name} #{run + 1}" if args.repeat > 1 else name, source, handler)
            for name, source, handler in templates for run in range(args.repeat)]
    print(f"solver {spec}; load average {os.getloadavg()[0]:.2f} at start; {len(runs)} runs", file=sys.stderr)
    print("| template | verdict | agree / answered (items) | tries | wall s |")
    print("|---|---|---|---|---|")
    pools: dict[str, SandboxPool] = {}
    reports = {}
    started = time.monotonic()
    try:
        for template_id, source, handler in runs:
            pool = pools.get(handler) or pools.setdefault(handler, SandboxPool(handler, workers=2))
            stage = RederivationVerifier(solver, str(spec), pool, retry=retry_policy(settings))
            start = time.monotonic()
            result = asyncio.run(stage(source, StructureReport(status=RunStatus.ok)))
            wall = time.monotonic() - start
            verdict = result.rederivation
            if verdict is None:  # a draw failed
                print(f"| {template_id} | draw failed: {result.decision.reasons[0]} | | | {wall:.0f} |", flush=True)
                continue
            reports[template_id] = {**verdict.model_dump(mode="json"), "wall_s": wall}
            print(f"| {template_id} | {verdict.status} | {verdict.agree} / {verdict.answered} ({verdict.n_items}) "
                  f"| {verdict.tries} | {wall:.0f} |", flush=True)
            if args.show and verdict.status != "agrees":
                for example in verdict.examples[:1]:
                    print(f"    item: {example.question!r} options {example.options} key {example.key} "
                          f"value {example.value!r} fits {example.fits} {example.error or ''}", file=sys.stderr)
                print("    " + (verdict.program or verdict.error or "").replace("\n", "\n    "), file=sys.stderr)
    finally:
        for pool in pools.values():
            pool.close()
    counts = {s: sum(r["status"] == s for r in reports.values())
              for s in ("agrees", "disagrees", "ambiguous", "not_rederivable")}
    walls = sorted(r["wall_s"] for r in reports.values())
    median = walls[len(walls) // 2] if walls else 0.0
    print(f"\n{counts}; median wall {median:.0f} s per template; {time.monotonic() - started:.0f} s in all; "
          f"load average {os.getloadavg()[0]:.2f} at the end", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
