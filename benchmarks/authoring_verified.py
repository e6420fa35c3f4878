"""Benchmark: the whole authoring loop with verification, offline, with local llama.cpp models.

Plan, generate, structure-check in the sandbox, judge (G-Eval panel), test on a student pool of
declared capability (log-likelihood answers, with and without the series) and refine with the
stages' feedback. Prints one JSON report: acceptance by stage, judge agreement (Krippendorff's
alpha) and mean score per criterion, student accuracy per rank with and without the series,
capability outcomes, diversity of the accepted templates' questions (mean embedding distance and
normalized Levenshtein distance), wall time, and model calls and tokens.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/authoring_verified.py --handler weather --templates 4 \
        --rounds 3 --report /tmp/authoring_verified_report.json

Needs the `local`, `local-small`, `local-tiny`, `examples` and `diversity` extras. Slow on a small
CPU: every candidate that passes the structure check costs a judge call per judge and criterion
and a forward pass per student, item and condition.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp's OpenMP runtime loads

from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.models import RunReport
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.items.rendering import TextFormat
from itemsmith.verification.diversity import diversity
from itemsmith.verification.judges import CRITERIA, PanelConfig
from itemsmith.verification.structure import check_structure

TASK = ("Multiple-choice questions about Seattle's daily weather that can only be answered by reading the series: "
        "values, extremes, counts, timing and comparisons over a window of at most 60 days of one or two channels, "
        "with answers computed from the data.")
JUDGES = ["local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b"]
STUDENTS = ["local:smollm2-135m@1", "local:qwen2.5-coder-0.5b@2", "local:qwen2.5-coder-1.5b@3"]


def stage_seconds(report: RunReport) -> dict[str, float]:
    """Wall seconds spent in each verification stage, summed over candidates."""
    seconds: dict[str, float] = {}
    for slot in report.slots:
        for attempt in slot.attempts:
            for result in attempt.verification:
                stage = result.decision.stage
                seconds[stage] = round(seconds.get(stage, 0.0) + result.elapsed_s, 1)
    return seconds


def accepted_diversity(report: RunReport, handler: str, num_samples: int, seed: int) -> dict[str, Any] | None:
    """Diversity of the accepted templates' questions, re-sampled with the run's seed (same items)."""
    questions = []
    for slot in report.accepted:
        assert slot.template is not None
        check = check_structure(slot.template.source, handler, num_samples=num_samples, seed=seed)
        questions += [item.question for item in check.items]
    if len(questions) < 2:
        return None
    return {"templates": len(report.accepted), **diversity(questions).model_dump()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handler", default="weather")
    parser.add_argument("--templates", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--generator", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--judges", nargs="+", default=JUDGES)
    parser.add_argument("--students", nargs="+", default=STUDENTS, help="SPEC@RANK, larger rank = more capable")
    parser.add_argument("--criteria", nargs="+", default=list(CRITERIA), choices=list(CRITERIA))
    parser.add_argument("--judge-samples", type=int, default=1, help="seeded local judges repeat themselves")
    parser.add_argument("--judge-retries", type=int, default=2, help="re-asks after a reply without a score")
    parser.add_argument("--items-per-prompt", type=int, default=2, help="items a judge sees per criterion")
    parser.add_argument("--max-series-points", type=int, default=60, help="values a judge sees per channel")
    parser.add_argument("--format", default=TextFormat.plain.value, choices=[f.value for f in TextFormat],
                        help="text format of the items shown to judges and students")
    parser.add_argument("--review-max-tokens", type=int, default=320, help="reply cap of the judges")
    parser.add_argument("--num-samples", type=int, default=5, help="items per structure check, judged and answered")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task", default=TASK)
    parser.add_argument("--out", type=Path, default=Path("/tmp/itemsmith-verified"))
    parser.add_argument("--run-id", default=None, help="resume this run (its finished slots are kept)")
    parser.add_argument("--report", type=Path, default=None, help="also write the JSON report here")
    args = parser.parse_args(argv)

    def show(event: SlotEvent) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] slot {event.slot} r{event.round} {event.phase:10} "
              f"tok {event.input_tokens}/{event.output_tokens} {event.title[:50]}"
              + (f" | {event.message[:160]}" if event.message else ""), file=sys.stderr, flush=True)

    panel = PanelConfig(criteria=tuple(args.criteria), items_per_prompt=args.items_per_prompt,
                        max_series_points=args.max_series_points, text_format=TextFormat(args.format))
    run_id = args.run_id or f"verified-{args.handler}-{time.strftime('%Y%m%d-%H%M%S')}"
    config = AuthorConfig(handler=args.handler, task=args.task, templates=args.templates, generator=args.generator,
                          rounds=args.rounds, slots=1, num_samples=args.num_samples, seed=args.seed,
                          out_dir=args.out, run_id=run_id, judges=args.judges, judge_samples=args.judge_samples,
                          judge_retries=args.judge_retries, panel=panel, students=args.students,
                          student_format=TextFormat(args.format), review_max_tokens=args.review_max_tokens)
    started = time.monotonic()
    report = asyncio.run(author(config, on_event=show))
    result = {
        "config": {"handler": args.handler, "templates": args.templates, "rounds": args.rounds,
                   "generator": args.generator, "judges": args.judges, "students": args.students,
                   "criteria": args.criteria, "judge_samples": args.judge_samples,
                   "judge_retries": args.judge_retries,
                   "items_per_prompt": args.items_per_prompt, "max_series_points": args.max_series_points,
                   "format": args.format, "review_max_tokens": args.review_max_tokens,
                   "num_samples": args.num_samples},
        "summary": report.summary(),
        "stage_seconds": stage_seconds(report),
        "diversity_accepted": accepted_diversity(report, args.handler, args.num_samples, args.seed),
        "slots": [{"slot": s.slot, "title": s.brief.title, "status": s.status, "rounds": s.rounds,
                   "attempts": [a.status for a in s.attempts],
                   "decision": s.decision.model_dump() if s.decision else None} for s in report.slots],
        "benchmark_wall_s": round(time.monotonic() - started, 1),
        "resumed": report.resumed,
        "run_dir": str(args.out / report.run_id),
    }
    text = json.dumps(result, indent=1, default=str)
    print(text)
    if args.report:
        args.report.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
