"""Benchmark: judging one candidate template with a local judge, 5 criteria x 3 items.

Single-pass (score-first) judging reads the score distribution after "Score:" in one forward pass
per criterion; the items part of the prompt is shared by the five criteria, so llama.cpp's prompt
cache evaluates it once. The reasoning form (the judge writes its reasoning, then "Score: N") is
measured beside it with `--reasoning` for comparison. The items are three real items of a curated
weather template, rendered as the panel renders them.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/judge_local.py --model qwen2.5-coder-1.5b [--reasoning] [--format plain]

Prints one JSON object: wall seconds (model load excluded, reported apart), prompt tokens, the
score per criterion and, for the score-first form, the share of the first token's probability
that fell on a score.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp's OpenMP runtime loads

from itemsmith.agents.llm.providers.llamacpp import LlamaCppChatModel, LlamaCppScoreReader, _chat_prompt, _load
from itemsmith.agents.llm.providers.local import model_path
from itemsmith.agents.settings import get_settings
from itemsmith.items.rendering import TextFormat
from itemsmith.sandbox import run_template
from itemsmith.templates_bank.curated import get_curated
from itemsmith.verification.judges import Judge, JudgeConfig, PanelConfig, ajudge_template, judge_prompt
from itemsmith.verification.samples import TemplateSample


def candidate(template_id: str) -> TemplateSample:
    template = get_curated(template_id)
    result = run_template(template.source, template.handler, num_samples=3, seed=11)
    if not result.ok:
        raise SystemExit(f"{template_id} did not run: {result.error}")
    return TemplateSample(template_id=template_id, items=result.items[:3], task="questions about Seattle's daily "
                          "weather that need the series", dataset="Seattle daily weather 2012-2015: precipitation "
                          "(mm), max and min temperature (C), wind (m/s), weather label")


async def measure(sample: TemplateSample, name: str, reasoning: bool, threads: int,
                  text_format: TextFormat) -> dict[str, object]:
    settings = get_settings()
    path = model_path(name, settings.model_cache_dir)
    started = time.monotonic()
    llama, _ = _load(str(path), settings.local_n_ctx, threads)
    load_s = time.monotonic() - started
    config = PanelConfig(items_per_prompt=3, max_series_points=60, max_concurrency=1, text_format=text_format)
    if reasoning:
        model = LlamaCppChatModel(model_path=path, model_name=name, n_ctx=settings.local_n_ctx, n_threads=threads,
                                  temperature=0.0, max_tokens=300)
        judge = Judge(JudgeConfig(name=name, samples=1, max_retries=0), model)
    else:
        judge = Judge(JudgeConfig(name=name, form="score_first"),
                      LlamaCppScoreReader(path, name, n_ctx=settings.local_n_ctx, n_threads=threads))
    started = time.monotonic()
    judgement = await ajudge_template(sample, [judge], config)
    wall = time.monotonic() - started
    return {"model": name, "form": "reasoning" if reasoning else "score_first", "format": text_format.value,
            "threads": threads, "wall_s": round(wall, 1),
            "load_s": round(load_s, 1), "criteria": len(config.criteria), "items": len(sample.items),
            "prompt_tokens_per_criterion": len(llama.tokenize(_chat_prompt(llama, judge_prompt(
                sample, "relevance", config, judge.config.form)).encode(), add_bos=False, special=True)),
            "scores": {s.criterion: None if s.score is None else round(s.score, 2) for s in judgement.scores},
            "rationales": {s.criterion: s.rationale[:120] for s in judgement.scores},
            "missing": sum(s.score is None for s in judgement.scores)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--template", default="weather_rainy_days_count")
    parser.add_argument("--threads", type=int, default=get_settings().local_n_threads,
                        help="llama.cpp threads (default: ITEMSMITH_LOCAL_N_THREADS, as the pipeline)")
    parser.add_argument("--reasoning", action="store_true", help="the reasoning form instead of score-first")
    parser.add_argument("--format", default=PanelConfig().text_format.value, choices=[f.value for f in TextFormat],
                        help="how the items' series are printed (default: the panel's)")
    args = parser.parse_args()
    report = asyncio.run(measure(candidate(args.template), args.model, args.reasoning, args.threads,
                                 TextFormat(args.format)))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
