"""What the audit's item checks and data fidelity cost per template, check by check and in one pass, on the items an
audit draws (fidelity by timestamp with derived= recipes, dates shown, options that say the same
thing, ambiguous keys, keys recomputed from the printed question).

Each named curated template (default: a few over every real-data handler) is drawn as the audit
draws it (`plan_draws`: 8 fresh seeds, about 240 items) through one sandbox pool per handler, the
records its items name are read in the sandbox, then each check runs `--repeats` times over those
items in this process; the fastest run counts (the machine is shared). Prints a table and writes
JSON. Run by hand:
    python benchmarks/item_checks_cost.py [TEMPLATE ...] [--repeats 3] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from itemsmith.items.schema import Item
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit.fidelity import check_fidelity, named_record_ids
from itemsmith.verification.audit.item_checks import ITEM_CHECKS, Drawn, check_items
from itemsmith.verification.audit.models import ItemDraw
from itemsmith.verification.audit.record_data import RecordData, fetch_record_data
from itemsmith.verification.audit.sandboxed import plan_draws
from itemsmith.verification.settings import AuditConfig

DEFAULT = ["weather_rainy_days_count", "weather_wettest_month", "stocks_close_on_date", "stocks_largest_daily_move",
           "glucose_time_in_range", "italy_power_peak_hour", "feat_extreme_date", "exam_period"]


def _best_ms(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _draw(source: str, pool: SandboxPool, config: AuditConfig) -> tuple[list[ItemDraw], RecordData]:
    """The items an audit draws (its seeds and sizes) and the records they name, read in the sandbox."""
    draws = []
    for seed, size in plan_draws(config):
        result = pool.run(source, num_samples=size, seed=seed)
        draws.append(ItemDraw(seed=seed, num_samples=size, items=[Item.model_validate(i) for i in result.items]))
    named = sorted({rid for draw in draws for item in draw.items for rid in named_record_ids(item)})
    return draws, fetch_record_data(lambda text: pool.run(text, num_samples=1, seed=0), named)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("templates", nargs="*", default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json-out", type=Path, default=None)
    args = parser.parse_args()
    curated = load_curated()
    config = AuditConfig()
    pools: dict[str, SandboxPool] = {}
    rows = []
    print("| template | items | fidelity ms | " + " | ".join(c.__name__.strip("_") + " ms" for c in ITEM_CHECKS)
          + " | all item checks ms |")
    print("|---|---|---|" + "---|" * (len(ITEM_CHECKS) + 1))
    try:
        for template_id in args.templates:
            template = curated[template_id]
            pool = pools.get(template.handler) or pools.setdefault(template.handler, SandboxPool(template.handler))
            draws, records = _draw(template.source, pool, config)
            items = [item for draw in draws for item in draw.items]
            timings = {"fidelity": _best_ms(lambda items=items, records=records: check_fidelity(items, records, config),
                                            args.repeats)}
            # each check alone on fresh draws (it pays for what checks share in an audit, e.g. recompute), then
            # all of them in one pass as the audit runs them
            for check in ITEM_CHECKS:
                timings[check.__name__.strip("_")] = _best_ms(
                    lambda check=check, draws=draws: check(Drawn.of(draws), config), args.repeats)
            timings["all item checks"] = _best_ms(lambda draws=draws: check_items(Drawn.of(draws), config), args.repeats)
            rows.append({"template": template_id, "items": len(items), "ms": timings})
            print(f"| {template_id} | {len(items)} | " + " | ".join(f"{v:.0f}" for v in timings.values()) + " |",
                  flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    load = os.getloadavg()
    total = sum(r["ms"]["fidelity"] + r["ms"]["all item checks"] for r in rows) / max(1, len(rows))
    print(f"\nmean over templates: {total:.0f} ms of fidelity and item checks per audit; load average {load[0]:.1f}")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({"load_average": load, "repeats": args.repeats, "templates": rows,
                                             "mean_ms_per_audit": total}, indent=2) + "\n")


if __name__ == "__main__":
    main()
