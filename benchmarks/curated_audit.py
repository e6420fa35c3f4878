"""The item audit over the whole curated bank: per template, pass/fail, every blind solver's
accuracy against chance, failed checks, and the audit's wall time.

Each template is audited once on fresh OS-random seeds (AuditConfig defaults: ~240 items over 8
seeds), with one sandbox pool per handler. Run by hand:
    python benchmarks/curated_audit.py            # whole bank, markdown table on stdout
    python benchmarks/curated_audit.py exam_period feat_break_date
"""

from __future__ import annotations

import sys
import time

from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit import audit_template


def main(only: set[str]) -> None:
    pools: dict[str, SandboxPool] = {}
    print("| template | verdict | items (distinct) | solvers tested: accuracy / chance (largest excess first) "
          "| failed checks | wall s |")
    print("|---|---|---|---|---|---|")
    passed = total = 0
    started = time.monotonic()
    try:
        for template_id, template in load_curated().items():
            if only and template_id not in only:
                continue
            pool = pools.get(template.handler) or pools.setdefault(template.handler, SandboxPool(template.handler))
            start = time.monotonic()
            report = audit_template(template.source, template.handler, pool=pool)
            wall = time.monotonic() - start
            tested = sorted((s for s in report.solvers if s.tested and s.accuracy is not None),
                            key=lambda s: s.chance - s.accuracy)
            solvers = ", ".join(f"{s.solver}{'*' if s.shortcut else ''} {s.accuracy:.2f}/{s.chance:.2f}"
                                for s in tested[:3])
            checks = "; ".join(report.failed_checks) or (report.error or "")
            total += 1
            passed += report.passed
            print(f"| {template_id} | {'pass' if report.passed else 'FAIL'} | {report.n_items} ({report.n_distinct}) "
                  f"| {solvers} | {checks} | {wall:.1f} |", flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    print(f"\n{passed}/{total} templates pass; {time.monotonic() - started:.0f} s in all", file=sys.stderr)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
