"""Benchmark: how often each reasoning block's skeleton keys its most common answer, and the audit's verdict.

For every reasoning block the planner offers (`reasoning_blocks.USES`), the skeleton the offline
default starts its slot from runs in the sandbox on a handler (8 fixed seeds of 30 items, as the
audit draws them). Each row: the share of items keyed with the most common key and that key, the
distinct keys, the item audit's verdict on the same skeleton (fixed plan, so reproducible) and the
blind solvers that beat chance. A key far more common than 1 in 4 is a prior a solver learns
without the data (`ask` balances a run's keys: `blocks._KeyBalance`); read a change against the
commit before by running it at both.

    python benchmarks/block_keys.py                     # weather (quick start) and Mauna Loa CO2
    python benchmarks/block_keys.py --handler weather --json /tmp/keys.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

from itemsmith.agents.authoring.prompts import skeleton
from itemsmith.items.reasoning_blocks import USES
from itemsmith.sandbox import SandboxPool
from itemsmith.verification.audit import audit_template

HANDLERS = {  # handler -> (channel, second channel)
    "weather": ("temp_max", "temp_min"),
    str(Path(__file__).with_name("co2_handler.py")): ("co2", None),
}
PLAN = [(100 + i, 30) for i in range(8)]


def measure(handler: str, channel: str, second: str | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with SandboxPool(handler) as pool:
        for use in USES:
            call = use.written(second)
            if call is None:
                continue
            code = skeleton(block=call, channel=channel)
            started = time.perf_counter()
            keys: Counter[str] = Counter()
            for seed, n in PLAN:
                result = pool.run(code, num_samples=n, seed=seed)
                keys.update(item["options"][item["answer_index"]] for item in result.items)
            drawn = time.perf_counter() - started
            audit = audit_template(code, handler, pool=pool, plan=PLAN)
            top, count = keys.most_common(1)[0] if keys else ("-", 0)
            rows.append({"handler": Path(handler).stem, "block": use.block, "items": sum(keys.values()),
                         "top_key": top, "top_share": round(count / max(1, sum(keys.values())), 3),
                         "distinct_keys": len(keys), "passed": audit.passed, "shortcuts": audit.shortcuts,
                         "draw_s": round(drawn, 1)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--handler", choices=["weather", "co2"], help="one handler only")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    rows = []
    for handler, (channel, second) in HANDLERS.items():
        if args.handler is None or Path(handler).stem.startswith(args.handler):
            rows += measure(handler, channel, second)
    print(f"load {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
