"""What the audit's semantic checks (data fidelity, key statistics both ways, the learned,
stated-in-text and question-memory solvers, the run at twice the size) cost per template.

Each named curated template is audited alternately with the checks on and switched off (the solvers
and item checks the audit had before, no record fetch, no larger run), `--repeats` times each, with
one sandbox pool per handler; it prints the mean wall seconds of both and the verdicts. Run by hand:
    python benchmarks/audit_semantic_cost.py weather_rainy_days_count stocks_close_on_date exam_period
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit import core, item_checks, sandboxed
from itemsmith.verification.audit.solvers import SOLVERS

NEW_SOLVERS = {"stated_in_text", "question_memory", "learned"}
NEW_CHECKS = {"_key_is_the_statistic"}


@contextmanager
def without_semantic_checks() -> Iterator[None]:
    saved = (core.SOLVERS, item_checks.ITEM_CHECKS, sandboxed.fetch_record_data, sandboxed._larger)

    def no_records(run: Any, ids: Any) -> None:
        return None

    core.SOLVERS = tuple(s for s in SOLVERS if s.name not in NEW_SOLVERS)
    item_checks.ITEM_CHECKS = tuple(c for c in saved[1] if c.__name__ not in NEW_CHECKS)
    sandboxed.fetch_record_data = no_records  # type: ignore[assignment]
    sandboxed._larger = lambda *args: []
    try:
        yield
    finally:
        core.SOLVERS, item_checks.ITEM_CHECKS, sandboxed.fetch_record_data, sandboxed._larger = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("templates", nargs="+")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    curated = load_curated()
    pools: dict[str, SandboxPool] = {}
    print("| template | before s | after s | before | after |\n|---|---|---|---|---|")
    rows = []
    try:
        for template_id in args.templates:
            template = curated[template_id]
            pool = pools.get(template.handler) or pools.setdefault(template.handler, SandboxPool(template.handler))
            walls: dict[bool, list[float]] = {False: [], True: []}
            verdicts: dict[bool, bool] = {}
            for _ in range(args.repeats):
                for after in (False, True):
                    started = time.monotonic()
                    if after:
                        report = sandboxed.audit_template(template.source, template.handler, pool=pool)
                    else:
                        with without_semantic_checks():
                            report = sandboxed.audit_template(template.source, template.handler, pool=pool)
                    walls[after].append(time.monotonic() - started)
                    verdicts[after] = report.passed
            rows.append((statistics.mean(walls[False]), statistics.mean(walls[True])))
            print(f"| {template_id} | {rows[-1][0]:.1f} | {rows[-1][1]:.1f} | {verdicts[False]} | {verdicts[True]} |",
                  flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    before, after = statistics.mean(r[0] for r in rows), statistics.mean(r[1] for r in rows)
    print(f"\nmean {before:.2f} s before, {after:.2f} s after ({after / before - 1:+.0%})")


if __name__ == "__main__":
    main()
