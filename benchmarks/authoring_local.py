"""Benchmark: author templates for bundled handlers with a local llama.cpp generator, offline.

Reports, per handler and overall: the share of slots whose template passes the structure check
within 1, 2 and 3 rounds, wall time and tokens per accepted template. The check is the same
sandboxed `check_structure` as in production; nothing is loosened for the benchmark.

    python benchmarks/authoring_local.py --handlers weather stocks --templates 5 \
        --generator local:qwen2.5-coder-1.5b --out /tmp/itemsmith-bench

Needs the `local` and `examples` extras. Slow on a small CPU (each round is a prompt of a few
hundred new tokens plus a few hundred generated ones; the shared prompt prefix is evaluated once
per handler and reused from llama.cpp's cache).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig

TASK = ("Multiple-choice questions that test whether a model can read and reason about this dataset's time "
        "series: values, extremes, counts, timing, changes and comparisons, with answers computed from the data.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handlers", nargs="+", default=["weather", "stocks"])
    parser.add_argument("--templates", type=int, default=5)
    parser.add_argument("--generator", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--planner", default=None, help="default: the generator")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slots", type=int, default=1, help="one in-process model serializes calls anyway")
    parser.add_argument("--task", default=TASK)
    parser.add_argument("--out", type=Path, default=Path("/tmp/itemsmith-bench"))
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for handler in args.handlers:
        def show(event: SlotEvent, handler: str = handler) -> None:
            print(f"[{time.strftime('%H:%M:%S')}] {handler} slot {event.slot} r{event.round} {event.phase:10} "
                  f"tok {event.input_tokens}/{event.output_tokens} {event.title[:50]}"
                  + (f" | {event.message[:120]}" if event.message else ""), flush=True)

        config = AuthorConfig(handler=handler, task=args.task, templates=args.templates, generator=args.generator,
                              planner=args.planner, rounds=args.rounds, slots=args.slots, out_dir=args.out,
                              run_id=f"bench-{handler}-{time.strftime('%Y%m%d-%H%M%S')}",
                              judges=[], students=[])  # no judge or student models: the generator's own numbers
        report = asyncio.run(author(config, on_event=show))
        summary = report.summary()
        summary["planner_briefs"] = report.plan.from_planner
        summary["fallback_briefs"] = report.plan.fallback
        results.append(summary)
        for slot in report.slots:
            print(f"  slot {slot.slot} {slot.status:9} rounds={slot.rounds} pass_round={slot.structure_passed_round} "
                  f"{slot.brief.title}")
            for attempt in slot.attempts:
                print(f"     r{attempt.round} {attempt.status:16} {(attempt.error or '')[:150]}")
        print(json.dumps(summary, indent=1), flush=True)

    slots = sum(r["slots"] for r in results)
    accepted = sum(r["accepted"] for r in results)
    wall = sum(r["wall_s"] for r in results)
    tokens = sum(r["input_tokens"] + r["output_tokens"] for r in results)
    overall = {
        "generator": args.generator, "handlers": args.handlers, "slots": slots, "accepted": accepted,
        **{f"structure_pass_rate_r{k}": round(sum(r[f"structure_pass_rate_r{k}"] * r["slots"] for r in results)
                                             / slots, 3) for k in range(1, args.rounds + 1)},
        "wall_s": round(wall, 1), "wall_s_per_accepted": round(wall / accepted, 1) if accepted else None,
        "tokens_per_accepted": round(tokens / accepted) if accepted else None,
        "per_handler": results,
    }
    (args.out / "authoring_local.json").write_text(json.dumps(overall, indent=1))
    print(json.dumps(overall, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
