"""Benchmark: a slot's next round after the judges used the same local model, with and without the
saved prompt states (`agents.llm.providers.llamacpp.PromptStates`, ``ITEMSMITH_LOCAL_PROMPT_CACHE_MB``).

One slot of an authoring run on the weather handler, with the default local model as generator
and judge (as in the default pipeline): round 1 of a brief, then the judge panel's five criteria
over three items of a curated weather template (their prompts replace llama.cpp's cache), then
round 2 of the same slot (round 1, its reply and feedback). Each setting runs in a fresh process;
reported: the seconds and the prompt tokens read (not held by a cache) of every call.

    python benchmarks/prompt_cache.py            # both settings, one after the other

Needs the `examples` and `local` extras. About 6 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

from langchain_core.messages import AIMessage

MODEL = "local:qwen2.5-coder-1.5b"  # parsed where it is used, as a command line would
BRIEF = {"title": "Day with the largest temperature range", "category": "temporal_relation", "concept": "extremes",
         "kind": "mc", "question": "On which day of this window was temp_max - temp_min largest?",
         "answer_from": "argmax of temp_max - temp_min over a random window, its date",
         "columns": ["temp_max", "temp_min"]}
TASK = "questions about Seattle's daily weather"
FEEDBACK_ERROR = "template line 9: KeyError: 'temperature'"
JUDGED = "weather_largest_temp_range_day"


def one_setting() -> dict[str, Any]:
    """The three steps in this process, with the settings of its environment."""
    from itemsmith.agents.authoring.generator import build_prompt, first_message, messages_for
    from itemsmith.agents.feedback import build_feedback
    from itemsmith.agents.llm.factory import CallLog, build_judges
    from itemsmith.agents.llm.inference import RetryPolicy, complete, stream_tokens
    from itemsmith.agents.llm.providers import ModelOptions, make_model
    from itemsmith.agents.llm.spec import ModelSpec
    from itemsmith.agents.profile import profile_handler
    from itemsmith.sandbox import SandboxPool, run_template
    from itemsmith.templates_bank.curated import get_curated
    from itemsmith.verification.judges import PanelConfig, judge_template
    from itemsmith.verification.samples import TemplateSample

    with SandboxPool("weather") as pool:
        profile = profile_handler(pool)
    prompt = build_prompt(profile, TASK)
    first = first_message(prompt, BRIEF, [])
    spec = ModelSpec.parse(MODEL)
    handle = make_model(spec, options=ModelOptions(max_tokens=400))
    steps: list[dict[str, Any]] = []

    def chat(name: str, messages: list[Any]) -> AIMessage:
        read: list[int] = []

        async def call() -> AIMessage:
            with stream_tokens(lambda tokens, prompt_tokens=None: read.append(prompt_tokens)
                               if prompt_tokens is not None else None):
                reply, _ = await complete(handle, messages, retry=RetryPolicy(max_retries=0))
            return reply

        started = time.perf_counter()
        reply = asyncio.run(call())
        steps.append({"step": name, "seconds": round(time.perf_counter() - started, 1), "prompt_tokens_read": read[0],
                      "output_tokens": (reply.usage_metadata or {}).get("output_tokens")})
        return reply

    reply = chat("round 1", messages_for(prompt, first, None, None))
    template = get_curated(JUDGED)
    items = run_template(template.source, "weather", num_samples=3, seed=11).items
    sample = TemplateSample(template_id=JUDGED, items=items, task=TASK, dataset=profile.description)
    started = time.perf_counter()
    panel = [judge.bind(CallLog(), RetryPolicy(max_retries=0)) for judge in build_judges([spec])]
    judge_template(sample, panel, PanelConfig())
    steps.append({"step": "judge panel (5 criteria)", "seconds": round(time.perf_counter() - started, 1)})
    shown = f"```python\n{reply.content}\n```"
    chat("round 2", messages_for(prompt, first, shown, build_feedback(FEEDBACK_ERROR, str(reply.content), profile)))
    return {"cache_mb": int(os.environ.get("ITEMSMITH_LOCAL_PROMPT_CACHE_MB", "-1")), "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", action="store_true", help="run one setting in this process (internal)")
    parser.add_argument("--cache-mb", type=int, nargs="+", default=[0, 1024])
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_setting()))
        return
    results = []
    for cache_mb in args.cache_mb:
        env = {**os.environ, "ITEMSMITH_LOCAL_PROMPT_CACHE_MB": str(cache_mb)}
        done = subprocess.run([sys.executable, __file__, "--one"], env=env, capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), file=sys.stderr)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
