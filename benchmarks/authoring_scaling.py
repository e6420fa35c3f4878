"""Benchmark: concurrent template slots with a scripted model at a fixed latency per call.

N templates are authored with 1, 4 and 16 concurrent slots. Every generator call takes
`--latency` seconds (the scripted model sleeps, as a remote API would); every template is checked
in the real sandbox (`--sandbox-workers` workers) unless `--no-sandbox` swaps in an instant check
to isolate the slot scheduler. Scaling efficiency at k slots = T(1) / (k * T(k)) where T is the slot phase (first generation to
last slot done; profiling the handler and planning are excluded and reported as `total_s`); 1.0
is perfect.

    python benchmarks/authoring_scaling.py --templates 32 --latency 1.0 --slots 1 4 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.inference import ModelHandle
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.items.schema import RunStatus, StructureReport
from itemsmith.sandbox import SandboxPool

HANDLER = '''
import numpy as np
import pandas as pd


class LevelsHandler:
    name = "levels"
    description = "Twelve hourly water-level series (unit: m), 96 samples each."

    def records(self):
        return pd.DataFrame({"record_id": [f"r{i}" for i in range(12)], "slope": [i - 6 for i in range(12)]})

    def series(self, record_id):
        k = int(record_id[1:])
        t = np.arange(96)
        return pd.DataFrame({"level": (k - 6) * 0.1 * t + np.sin(t * (0.2 + k / 20))},
                            index=pd.date_range("2024-01-01", periods=96, freq="h", name="time"))
'''

TEMPLATE = '''```python
def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid)["level"].dropna()
        answer = round(float(values.max()), 1)
        wrong = [round(answer + d, 1) for d in (-6.0, -3.0, 3.0)]
        items.append(mc_item(f"What is the highest water level (m) of record {rid}?", answer, wrong,
                             series=[series(values.to_numpy(), name="level", unit="m")],
                             rationale=f"max of level = {answer}", metadata={"record_ids": [rid]}))
    return items
```'''


def plan(n: int) -> str:
    return json.dumps([{"title": f"Template {i}", "category": "arithmetic", "kind": "mc",
                        "question": f"Question number {i} about <record>?", "answer_from": "max of level",
                        "columns": ["level"]} for i in range(n)])


async def instant_check(source: str) -> StructureReport:
    return StructureReport(status=RunStatus.ok, deterministic=True, varied=True)


def measure(handler: Path, pool: SandboxPool, *, n: int, slots: int, latency: float, sandbox: bool,
            workers: int, out: Path) -> dict[str, float]:
    generator = ModelHandle(ScriptedChatModel.from_source({"replies": [TEMPLATE], "latency_s": latency}),
                            "scripted", "fixed-latency", 60.0)
    planner = ModelHandle(ScriptedChatModel.from_source([plan(n)]), "scripted", "planner", 60.0)
    config = AuthorConfig(handler=str(handler), task="water levels", templates=n, slots=slots,
                          sandbox_workers=workers, out_dir=out, checkpoint="memory", run_id=f"scale-{slots}-{sandbox}",
                          judges=[], students=[])  # the loop's own overhead: no judge or student models
    marks: list[float] = []

    def on_event(event: SlotEvent) -> None:
        if event.phase in ("generating", "accepted", "discarded", "failed"):
            marks.append(time.monotonic())

    started = time.monotonic()
    report = asyncio.run(author(config, generator_model=generator, planner_model=planner, pool=pool,
                                checker=None if sandbox else instant_check, on_event=on_event))
    total = time.monotonic() - started
    assert len(report.accepted) == n, report.summary()
    # slot phase: first generation started -> last slot finished (excludes profiling and planning)
    return {"slots": slots, "wall_s": round(max(marks) - min(marks), 2), "total_s": round(total, 2),
            "accepted": len(report.accepted), "calls": generator.model.calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=int, default=32)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--sandbox-workers", type=int, default=2)
    parser.add_argument("--no-sandbox", action="store_true", help="instant structure check (scheduler only)")
    parser.add_argument("--out", type=Path, default=None, help="write the results JSON here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        handler = Path(tmp) / "levels_handler.py"
        handler.write_text(HANDLER)
        with SandboxPool(str(handler), workers=args.sandbox_workers) as pool:
            rows = [measure(handler, pool, n=args.templates, slots=k, latency=args.latency,
                            sandbox=not args.no_sandbox, workers=args.sandbox_workers, out=Path(tmp) / "out")
                    for k in args.slots]
    base = next((r["wall_s"] for r in rows if r["slots"] == 1), None)
    for row in rows:
        if base:
            row["speedup"] = round(base / row["wall_s"], 2)
            row["efficiency"] = round(base / (row["slots"] * row["wall_s"]), 3)
        row["ideal_s"] = round(args.latency * -(-args.templates // row["slots"]), 2)
    result = {"templates": args.templates, "latency_s": args.latency, "sandbox": not args.no_sandbox,
              "sandbox_workers": args.sandbox_workers, "rows": rows}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
