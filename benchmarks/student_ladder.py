"""Benchmark: the default local student ladder answering one candidate's items, in one text format.

The ladder is `ITEMSMITH_DEFAULT_STUDENTS` (SmolLM2-135M, Qwen2.5-Coder-0.5B and 1.5B, by letter
log-likelihood), each answering every item with the series and blind, as the authoring pipeline's
student stage does. Every value of every series is in each prompt (students are never shown a
downsampled series), so the text format sets the cost.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/student_ladder.py [--template weather_rainy_days_count]
        [--items 8] [--format plain]

Prints one JSON object: wall seconds (model loads excluded, reported apart), the mean prompt
tokens of an item with its series, and each student's accuracy with and without the series.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp's OpenMP runtime loads

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.factory import build_students
from itemsmith.agents.settings import get_settings
from itemsmith.agents.stages.pipeline import resolve_pipeline
from itemsmith.items.rendering import TextFormat
from itemsmith.sandbox import run_template
from itemsmith.templates_bank.curated import get_curated
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import PoolConfig, Student, aanswer_template, student_prompt


def candidate(template_id: str, items: int) -> TemplateSample:
    template = get_curated(template_id)
    result = run_template(template.source, template.handler, num_samples=items, seed=11)
    if not result.ok:
        raise SystemExit(f"{template_id} did not run: {result.error}")
    return TemplateSample(template_id=template_id, items=result.items, task="benchmark", dataset=template.handler)


async def measure(sample: TemplateSample, text_format: TextFormat) -> dict[str, object]:
    settings = get_settings()
    started = time.monotonic()
    ladder = resolve_pipeline(AuthorConfig(handler="weather", task="benchmark"), settings).students
    students = [Student(s.config, s.model) for s in build_students(ladder, settings=settings, text_format=text_format)]
    top = students[-1]
    token_counts = [top.model.count_tokens(student_prompt(item, top.config)) for item in sample.items]
    load_s = time.monotonic() - started
    started = time.monotonic()
    report = await aanswer_template(sample, students, PoolConfig(max_concurrency=1))
    return {"template": sample.template_id, "format": text_format.value, "items": len(sample.items),
            "students": [s.config.name for s in students], "wall_s": round(time.monotonic() - started, 1),
            "load_s": round(load_s, 1), "prompt_tokens_per_item": round(sum(token_counts) / len(token_counts)),
            "accuracy": {k: round(v, 2) for k, v in report.accuracies().items()},
            "blind_accuracy": {k: round(v, 2) for k, v in report.accuracies(blind=True).items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", default="weather_rainy_days_count")
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--format", default=TextFormat.plain.value, choices=[f.value for f in TextFormat])
    args = parser.parse_args()
    report = asyncio.run(measure(candidate(args.template, args.items), TextFormat(args.format)))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
