"""The item audit over the curated bank: each blind solver's accuracy vs chance, and wall time.

    python benchmarks/item_audit.py [--only SUBSTRING ...] [--items 240] [--workers 2] [--json FILE]

For every curated template: `audit_template` through the sandbox with fresh OS-random seeds
(>= 200 items: `--items`, default the audit's own 240, spread over 8 seeds plus the
key-consistency and determinism runs), one warm `SandboxPool` of `--workers` workers per handler
(the audit runs its draws on them at once; pool start-up is reported apart, not in the
per-template time). Prints per template: passed, items, audit wall
time, every tested solver as accuracy/chance (a `*` marks a shortcut: Holm-corrected p < alpha
and a gain over chance of at least min_excess of all items) and the failed item checks. Numbers
depend on the machine and its load (shown); the target is <= 2 s per template.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from itemsmith.sandbox import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit import audit_template
from itemsmith.verification.audit.solvers import SOLVERS
from itemsmith.verification.settings import VerificationSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="template ids containing any of these")
    parser.add_argument("--items", type=int, default=None, help="items per audit (default: ITEMSMITH_AUDIT_ITEMS, else 240)")
    parser.add_argument("--workers", type=int, default=2, help="sandbox workers per handler (default 2)")
    parser.add_argument("--json", type=Path, default=None, help="write every report here")
    args = parser.parse_args()
    config = VerificationSettings(**({} if args.items is None else {"audit": {"items": args.items}})).audit
    templates = [t for t in load_curated().values() if not args.only or any(s in t.id for s in args.only)]
    print(f"# item audit, {len(templates)} curated templates, {config.items} items over {config.seeds} seeds, "
          f"{args.workers} sandbox workers; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    names = [s.name for s in SOLVERS]
    print("| template | audit | items | ms | " + " | ".join(names) + " | failed checks |")
    print("|---" * (len(names) + 5) + "|")
    pools: dict[str, SandboxPool] = {}
    reports: dict[str, Any] = {}
    times: list[float] = []
    started = time.monotonic()
    try:
        for template in templates:
            handler = template.handler or "synthetic"
            if handler not in pools:
                t0 = time.monotonic()
                pools[handler] = SandboxPool(handler, workers=args.workers)
                print(f"<!-- pool {handler} started in {time.monotonic() - t0:.1f} s -->")
            report = audit_template(template.source, handler, config=config, pool=pools[handler])
            reports[template.id] = report.model_dump(mode="json")
            times.append(report.elapsed_ms)
            cells = []
            for name in names:
                s = report.solver(name) if report.solvers else None
                if s is None or not s.tested:
                    cells.append("–" if s is None or not s.applicable else f"({s.applicable})")
                else:
                    cells.append(f"{s.accuracy:.2f}/{s.chance:.2f}" + ("*" if s.shortcut else ""))
            failed = ", ".join(report.failed_checks) or (report.error or "")[:80]
            print(f"| {template.id} | {'pass' if report.passed else 'FAIL'} | {report.n_items} | "
                  f"{report.elapsed_ms:.0f} | " + " | ".join(cells) + f" | {failed} |", flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    passed = sum(r["passed"] for r in reports.values())
    print(f"\n{passed} of {len(reports)} pass; audit wall time per template: median {statistics.median(times):.0f} ms, "
          f"max {max(times):.0f} ms, {sum(t <= 2000 for t in times)} of {len(times)} <= 2 s; "
          f"total {time.monotonic() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
