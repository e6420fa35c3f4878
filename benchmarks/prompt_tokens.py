"""Benchmark: where the prompt tokens of the generator, the judges and the students go.

For a few built-in handlers and briefs it counts the tokens of every prompt section with the real
tokenizer of the default local generator (Qwen2.5-Coder-1.5B, loaded vocabulary-only through
llama-cpp-python), else with a stated approximation (characters / 3.5):

- generator: the system prompt (contract and API, skeleton, cookbook) and the first user message
  (dataset, curated examples, task and brief), the whole round-1 prompt in the chat template, the
  part of it not shared with another brief's prompt (what llama.cpp evaluates when slots take
  turns: the shared prefix stays in its cache), and a round-2 prompt (round 1 + the previous code
  + feedback for a typical error);
- judges: one criterion's prompt over the panel's default rendering, and its items part (shared
  by the criteria);
- students: one item as a student reads it (plain text, the whole series).

It only imports public names that older versions have too, so the same file measures an older
checkout: put that checkout's namespace tree first on the path::

    python benchmarks/prompt_tokens.py --out /tmp/after.json
    git worktree add /tmp/prompt-before <commit>
    PYTHONPATH=$(cd /tmp/prompt-before && .ci/namespace-tree) python benchmarks/prompt_tokens.py \\
        --out /tmp/before.json
    python benchmarks/prompt_tokens.py --compare /tmp/before.json /tmp/after.json
    git worktree remove /tmp/prompt-before

Needs the `examples` extra (weather, glucose) and, for exact counts, the `local` extra.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

TASK = ("Multiple-choice questions that test whether a model can read and reason about this dataset's time "
        "series: values, extremes, counts, timing, changes and comparisons, with answers computed from the data.")
APPROX_CHARS_PER_TOKEN = 3.5

BRIEFS: dict[str, list[dict[str, object]]] = {
    "weather": [
        {"title": "Wettest month of a year", "category": "arithmetic", "concept": "aggregation", "kind": "mc",
         "question": "In <record>, which month had the most precipitation?",
         "answer_from": "sum precipitation per month of the record's series, the month with the largest sum",
         "columns": ["precipitation"]},
        {"title": "Day with the largest temperature range", "category": "temporal_relation", "concept": "extremes",
         "kind": "mc", "question": "On which day of this window was temp_max - temp_min largest?",
         "answer_from": "argmax of temp_max - temp_min over a random window, its date",
         "columns": ["temp_max", "temp_min"]},
        {"title": "Windier first or second half", "category": "comparison", "concept": "comparison", "kind": "tf",
         "question": "Was the mean wind of the first half of the window higher than the second half?",
         "answer_from": "mean wind of both halves of a random window", "columns": ["wind"]},
    ],
    "glucose": [
        {"title": "Time of the highest reading of a day", "category": "temporal_relation", "concept": "extremes",
         "kind": "mc", "question": "At what time of day was the glucose reading highest on <date>?",
         "answer_from": "argmax of glucose over one day's readings, its time", "columns": ["glucose"]},
        {"title": "Share of readings above 180 mg/dL", "category": "arithmetic", "concept": "counting",
         "kind": "mc", "question": "What share of the readings in this stretch is above 180 mg/dL?",
         "answer_from": "mean of glucose > 180 over a random stretch, in percent", "columns": ["glucose"]},
    ],
    "synthetic": [
        {"title": "Direction of the trend", "category": "pattern_recognition", "concept": "trend", "kind": "mc",
         "question": "Is the series trending up, down or flat?",
         "answer_from": "slope of a least-squares line through the values", "columns": ["value"]},
        {"title": "Position of the largest spike", "category": "anomaly_detection", "concept": "anomaly",
         "kind": "mc", "question": "At which position is the largest spike?",
         "answer_from": "argmax of the absolute deviation from the median", "columns": ["value"]},
    ],
}
CURATED_FOR_JUDGES = {
    "weather": ["weather_wettest_month", "weather_largest_temp_range_day", "weather_rainy_days_count"],
    "glucose": ["glucose_time_in_range", "glucose_hypo_tf"],
    "synthetic": ["feat_extreme_value", "feat_trend_classify"],
}
FEEDBACK_ERROR = "template line 9: KeyError: 'temperature'"


class Counter:
    """Token counts with the local generator's tokenizer, else the approximation."""

    def __init__(self, model: str) -> None:
        self.llama: Any = None
        self.name = f"approximation: characters / {APPROX_CHARS_PER_TOKEN}"
        try:
            from llama_cpp import Llama

            from itemsmith.agents.llm.providers.local import model_path
            from itemsmith.agents.settings import get_settings

            path = model_path(model, get_settings().model_cache_dir)
            self.llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
            self.name = f"{model} tokenizer (llama.cpp, vocab_only)"
        except Exception as exc:  # noqa: BLE001 - any missing piece means the stated approximation
            print(f"no tokenizer ({type(exc).__name__}: {exc}); using the approximation", file=sys.stderr)

    def text(self, text: str) -> int:
        if self.llama is None:
            return round(len(text) / APPROX_CHARS_PER_TOKEN)
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def tokens(self, messages: list[BaseMessage]) -> list[int]:
        """The token ids of `messages` in the model's chat template, the assistant turn opened (for
        the approximation: character codes; `size` turns a count of them into tokens)."""
        if self.llama is None:
            return [ord(c) for c in "".join(f"{m.type}: {m.content}\n" for m in messages)]
        from itemsmith.agents.llm.providers.llamacpp import _chat_prompt

        prompt = _chat_prompt(self.llama, messages)
        return list(self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def size(self, n: int) -> int:
        """Tokens in `n` elements of a `tokens` list."""
        return n if self.llama is not None else round(n / APPROX_CHARS_PER_TOKEN)


def _shared_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _sections(first: str) -> dict[str, str]:
    """The first user message split at its `## ` headings: dataset, examples, task and brief."""
    out = {"dataset": [], "examples": [], "task_brief": []}  # type: dict[str, list[str]]
    for block in ("\n" + first).split("\n## ")[1:]:
        heading = block.split("\n", 1)[0].lower()
        key = "dataset" if heading.startswith("dataset") else "examples" if "template" in heading and (
            "working" in heading or "example" in heading) else "task_brief"
        out[key].append("## " + block)
    return {k: "\n".join(v) for k, v in out.items()}


def _system_sections(system: str) -> dict[str, str]:
    head, _, rest = system.partition("## Skeleton")
    skeleton, _, cookbook = rest.partition("## Cookbook")
    return {"contract_api": head, "skeleton": "## Skeleton" + skeleton, "cookbook": "## Cookbook" + cookbook}


def generator_numbers(handler: str, profile: Any, count: Counter, examples: int | None) -> dict[str, Any]:
    from itemsmith.agents.authoring.generator import build_prompt, first_message, messages_for
    from itemsmith.agents.feedback import build_feedback
    from itemsmith.templates_bank.curated import get_curated

    prompt = build_prompt(profile, TASK) if examples is None else build_prompt(profile, TASK, examples=examples)
    system = {k: count.text(v) for k, v in _system_sections(prompt.system).items()}
    system["total"] = count.text(prompt.system)
    previous = get_curated(CURATED_FOR_JUDGES[handler][0]).source
    feedback = build_feedback(FEEDBACK_ERROR, previous, profile)
    briefs = []
    round1: list[list[int]] = []
    for brief in BRIEFS[handler]:
        first = first_message(prompt, brief, ["Mean of a window"])
        tokens = count.tokens(messages_for(prompt, first, None, None))
        round1.append(tokens)
        round2 = count.tokens(messages_for(prompt, first, f"```python\n{previous.rstrip()}\n```", feedback))
        briefs.append({"title": brief["title"], "sections": {k: count.text(v) for k, v in _sections(first).items()},
                       "first_message": count.text(first), "round1": count.size(len(tokens)),
                       "round2": count.size(len(round2)),
                       "round2_added": count.size(len(round2) - _shared_prefix(tokens, round2))})
    for i, tokens in enumerate(round1):
        shared = max((_shared_prefix(tokens, other) for j, other in enumerate(round1) if j != i), default=0)
        briefs[i]["round1_uncached"] = count.size(len(tokens) - shared)
    return {"system": system, "briefs": briefs,
            "mean": {key: round(statistics.mean(b[key] for b in briefs)) for key in
                     ("round1", "round1_uncached", "round2", "round2_added")},
            "mean_sections": {key: round(statistics.mean(b["sections"][key] for b in briefs)) for key in
                              ("dataset", "examples", "task_brief")}}


def review_numbers(handler: str, description: str, count: Counter) -> dict[str, Any]:
    from itemsmith.sandbox import run_template
    from itemsmith.templates_bank.curated import get_curated
    from itemsmith.verification.judges import CRITERION_MARKER, PanelConfig, judge_prompt
    from itemsmith.verification.samples import TemplateSample
    from itemsmith.verification.students import STUDENT_SYSTEM, StudentConfig, student_prompt

    config = PanelConfig()
    judges, shared, students, points = [], [], [], []
    for template_id in CURATED_FOR_JUDGES[handler]:
        template = get_curated(template_id)
        result = run_template(template.source, handler, num_samples=3, seed=11)
        if not result.ok:
            raise SystemExit(f"{template_id} did not run: {result.error}")
        sample = TemplateSample(template_id=template_id, items=result.items, task=TASK, dataset=description)
        messages = judge_prompt(sample, "solvability", config)
        judges.append(count.size(len(count.tokens(messages))))
        shared.append(count.text(str(messages[-1].content).split(CRITERION_MARKER)[0]))
        student = StudentConfig(name="student", rank=1)
        for item in sample.items:
            students.append(count.text(f"{STUDENT_SYSTEM}\n\n{student_prompt(item, student, mode='loglik')}\n\nAnswer:"))
            points.append(sum(len(s.values) for s in item.series))
    return {"judge_prompt": round(statistics.mean(judges)), "judge_items_part": round(statistics.mean(shared)),
            "judge_per_template_5_criteria": round(statistics.mean(judges) * len(config.criteria)),
            "student_item_mean": round(statistics.mean(students)), "student_item_max": max(students),
            "series_points_per_item_mean": round(statistics.mean(points))}


def measure(handlers: list[str], model: str, examples: int | None) -> dict[str, Any]:
    from itemsmith.agents.profile import profile_handler
    from itemsmith.sandbox import SandboxPool

    count = Counter(model)
    out: dict[str, Any] = {"tokenizer": count.name, "handlers": {}}
    for handler in handlers:
        with SandboxPool(handler) as pool:
            profile = profile_handler(pool)
        out["handlers"][handler] = {"generator": generator_numbers(handler, profile, count, examples),
                                    "review": review_numbers(handler, profile.description, count)}
    return out


def _flat(data: dict[str, Any]) -> dict[str, float]:
    rows: dict[str, float] = {}
    for handler, numbers in data["handlers"].items():
        gen = numbers["generator"]
        for key, value in gen["system"].items():
            rows[f"{handler} generator system.{key}"] = value
        for key, value in gen["mean_sections"].items():
            rows[f"{handler} generator first message.{key}"] = value
        for key, value in gen["mean"].items():
            rows[f"{handler} generator {key}"] = value
        for key, value in numbers["review"].items():
            rows[f"{handler} {key}"] = value
    return rows


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    old, new = _flat(before), _flat(after)
    lines = [f"tokenizer: {after['tokenizer']}", f"{'':58} {'before':>7} {'after':>7} {'change':>7}"]
    for key in new:
        a, b = old.get(key), new[key]
        change = f"{(b - a) / a:+.0%}" if a else ""
        lines.append(f"{key:58} {'' if a is None else a:>7} {b:>7} {change:>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handlers", nargs="+", default=["weather", "glucose", "synthetic"], choices=sorted(BRIEFS))
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="local model whose tokenizer counts")
    parser.add_argument("--examples", type=int, default=None, help="build_prompt's examples (default: its own)")
    parser.add_argument("--out", type=Path, help="write the numbers here as JSON")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="print a table of two earlier --out files and exit")
    args = parser.parse_args(argv)
    show: Callable[[str], None] = print
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        show(compare(before, after))
        return 0
    data = measure(args.handlers, args.model, args.examples)
    if args.out:
        args.out.write_text(json.dumps(data, indent=1))
    show(f"tokenizer: {data['tokenizer']}")
    for key, value in _flat(data).items():
        show(f"{key:58} {value:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
