"""Benchmark: does the curated example in the generator prompt help the local generator?

Runs the authoring loop on fixed weather briefs (a scripted planner returns them, so every
setting gets the same plan) with the structure check and the item audit only (no judges, no
students), once per value of ``--examples`` (curated examples nearest each brief in the prompt),
and reports per setting: templates that passed the structure check and the audit in round 1 and
within ``--rounds``, the errors, prompt and reply tokens, and seconds per round.

    python benchmarks/generator_examples.py --examples 0 1 --rounds 1 [--briefs 0:4] --out /tmp/gen-examples

Needs the `examples` and `local` extras. About a minute or two per round on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.inference import ModelHandle
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel

TASK = "questions about Seattle's daily weather"  # the README's quick start
BRIEFS = [
    {"title": "Rainy days in a stretch", "category": "arithmetic", "concept": "counting", "kind": "mc",
     "question": "On how many days of this stretch of <record> was there precipitation?",
     "answer_from": "count of days with precipitation > 0 in a random window of the series", "columns": ["precipitation"]},
    {"title": "Mean daily high of a stretch", "category": "arithmetic", "concept": "arithmetic", "kind": "mc",
     "question": "What was the mean temp_max over this stretch of <record>?",
     "answer_from": "mean of temp_max over a random window of the series, rounded to 1 decimal", "columns": ["temp_max"]},
    {"title": "Largest jump in precipitation", "category": "anomaly_detection", "concept": "", "kind": "mc",
     "question": "Between which consecutive days of <record> did precipitation change the most?",
     "answer_from": "argmax of abs(diff) of precipitation, the dates on both sides", "columns": ["precipitation"]},
    {"title": "Day of the warmest high", "category": "temporal_relation", "concept": "", "kind": "mc",
     "question": "On which day of <record> was temp_max highest?",
     "answer_from": "the date at the argmax of temp_max", "columns": ["temp_max"]},
    {"title": "Windiest day of a stretch", "category": "temporal_relation", "concept": "", "kind": "mc",
     "question": "On which day of this stretch of <record> was the wind strongest?",
     "answer_from": "the date at the argmax of wind over a random window", "columns": ["wind"]},
    {"title": "Temperature range of a month", "category": "arithmetic", "concept": "arithmetic", "kind": "mc",
     "question": "What was the range of temp_min in <record>?",
     "answer_from": "max minus min of temp_min over the series, rounded to 1 decimal", "columns": ["temp_min"]},
    {"title": "Dry days in a stretch", "category": "arithmetic", "concept": "counting", "kind": "mc",
     "question": "On how many days of this stretch of <record> was there no precipitation?",
     "answer_from": "count of days with precipitation == 0 in a random window", "columns": ["precipitation"]},
    {"title": "Warmer second half", "category": "pattern_recognition", "concept": "trend", "kind": "tf",
     "question": "True or false: the mean temp_max of the second half of <record> is higher than of the first half.",
     "answer_from": "mean of temp_max of the second half > mean of the first half", "columns": ["temp_max"]},
]


def planner(briefs: list[dict[str, object]]) -> ModelHandle:
    return ModelHandle(ScriptedChatModel.from_source([json.dumps(briefs)]), "scripted", "fixed-plan", 60.0)


async def measure(examples: int, briefs: list[dict[str, object]], rounds: int, out: Path,
                  generator: str) -> dict[str, object]:
    config = AuthorConfig(handler="weather", task=TASK, templates=len(briefs), generator=generator,
                          rounds=rounds, slots=1, examples=examples, judges=[], students=[],
                          out_dir=out, run_id=f"examples-{examples}-{time.strftime('%H%M%S')}")
    started = time.monotonic()
    report = await author(config, planner_model=planner(briefs))
    slots = []
    for slot in report.slots:
        slots.append({"title": slot.brief.title, "status": slot.status, "rounds": slot.rounds,
                      "passed_structure_round": slot.structure_passed_round,
                      "attempts": [{"status": a.status, "error": (a.error or "")[:160],
                                    "input_tokens": a.input_tokens, "output_tokens": a.output_tokens,
                                    "llm_s": round(a.llm_s, 1)} for a in slot.attempts]})
    attempts = [a for s in report.slots for a in s.attempts]
    return {"examples": examples, "wall_s": round(time.monotonic() - started, 1),
            "accepted_round_1": sum(s.status == "accepted" and s.rounds == 1 for s in report.slots),
            "accepted": len(report.accepted), "slots": len(report.slots),
            "output_tokens_per_round": round(sum(a.output_tokens for a in attempts) / max(len(attempts), 1)),
            "input_tokens_per_round": round(sum(a.input_tokens for a in attempts) / max(len(attempts), 1)),
            "llm_s_per_round": round(sum(a.llm_s for a in attempts) / max(len(attempts), 1), 1),
            "slot_results": slots}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--briefs", default=":", help="a slice of the fixed briefs, e.g. 0:4")
    parser.add_argument("--generator", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--out", type=Path, default=Path("/tmp/itemsmith-generator-examples"))
    args = parser.parse_args()
    start, _, stop = args.briefs.partition(":")
    briefs = BRIEFS[int(start or 0):int(stop) if stop else None]
    results = [asyncio.run(measure(k, briefs, args.rounds, args.out, args.generator)) for k in args.examples]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
