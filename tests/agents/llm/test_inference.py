"""One LLM call: timeouts, bounded retries on transient errors only, usage and cost."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from itemsmith.agents.errors import EmptyReplyError, ProviderCallError
from itemsmith.agents.llm.catalog import price_for
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete, is_transient, redact
from itemsmith.agents.llm.providers.scripted import ScriptedHTTPError
from itemsmith.agents.llm.usage import UsageLedger, cost_of

from ..conftest import scripted

FAST = RetryPolicy(max_retries=3, initial_s=0.0, max_s=0.0)
MSG = [HumanMessage("hello")]


def run(handle: ModelHandle, retry: RetryPolicy = FAST, ledger: UsageLedger | None = None):
    return asyncio.run(complete(handle, MSG, retry=retry, ledger=ledger))


def test_rate_limit_and_server_errors_are_retried() -> None:
    handle = scripted([{"error": 429}, {"error": 503}, "ok"])
    ledger = UsageLedger()
    reply, usage = run(handle, ledger=ledger)
    assert reply.content == "ok" and usage.retries == 2 and handle.model.calls == 3
    assert len(ledger.calls) == 1 and ledger.totals().output_tokens == usage.output_tokens


def test_scripted_provider_timeout_is_retried_then_succeeds() -> None:
    handle = scripted([{"content": "late", "latency_s": 5}, "on time"], timeout_s=0.2)
    reply, usage = run(handle)
    assert reply.content == "on time" and usage.retries == 1


def test_permanent_errors_fail_at_once() -> None:
    handle = scripted([{"error": 400}, "never"])
    with pytest.raises(ProviderCallError, match="permanent") as info:
        run(handle)
    assert handle.model.calls == 1 and not info.value.transient


def test_retries_are_bounded() -> None:
    handle = scripted([{"error": 500}])
    with pytest.raises(ProviderCallError, match="retries exhausted") as info:
        run(handle, RetryPolicy(max_retries=2, initial_s=0.0, max_s=0.0))
    assert handle.model.calls == 3 and info.value.transient and info.value.attempts == 3


def test_a_timed_out_call_is_not_sent_again_where_its_handle_says_so() -> None:
    handle = scripted([{"content": "late", "latency_s": 5}, "on time"], timeout_s=0.2)
    handle = replace(handle, retry_timeouts=False)
    ledger = UsageLedger()
    with pytest.raises(ProviderCallError, match="timed-out calls are not retried") as info:
        run(handle, ledger=ledger)
    assert handle.model.calls == 1 and info.value.transient and ledger.totals().failed_calls == 1


def test_the_handle_s_own_retry_count_overrides_the_policy() -> None:
    handle = replace(scripted([{"error": 503}]), max_retries=1)
    with pytest.raises(ProviderCallError, match="retries exhausted, 2 attempt"):
        run(handle)
    assert handle.model.calls == 2


def test_empty_reply_raises() -> None:
    with pytest.raises(EmptyReplyError):
        run(scripted([""]))


def test_transient_classification() -> None:
    assert is_transient(TimeoutError()) and is_transient(ConnectionError())
    assert is_transient(ScriptedHTTPError(429)) and is_transient(ScriptedHTTPError(502))
    assert not is_transient(ScriptedHTTPError(401)) and not is_transient(ValueError("bad"))


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(initial_s=1.0, max_s=5.0)
    assert 0.5 <= policy.delay(1) <= 1.0
    assert 2.5 <= policy.delay(4) <= 5.0 and policy.delay(10) <= 5.0


def test_cost_from_price_table() -> None:
    dated = price_for("openai", "gpt-4o-2024-08-06")  # a dated snapshot is its base id
    assert dated is not None and (dated.input, dated.output) == (2.50, 10.00)
    mini = price_for("openai", "gpt-4o-mini")
    assert mini is not None and (mini.input, mini.output) == (0.15, 0.60)
    assert cost_of("openai", "gpt-4o", 1_000_000, 100_000) == pytest.approx(3.5)
    assert cost_of("local", "qwen2.5-coder-1.5b", 10, 10) == 0.0
    assert cost_of("openai_compatible", "mystery", 10, 10) is None


def test_redaction_of_key_like_strings() -> None:
    assert "sk-abc" not in redact("Incorrect API key provided: sk-abcdef123456789")


def test_cached_prompt_tokens_are_metered() -> None:
    cached = AIMessage("Score: 7", usage_metadata={"input_tokens": 2000, "output_tokens": 4, "total_tokens": 2004,
                                                   "input_token_details": {"cache_read": 1800}})
    handle = ModelHandle(GenericFakeChatModel(messages=iter([cached, AIMessage("Score: 6")])), "openai", "gpt-4o", 5.0)
    ledger = UsageLedger()
    for _ in range(2):
        asyncio.run(complete(handle, [HumanMessage("judge this")], retry=RetryPolicy(max_retries=0), ledger=ledger))
    assert [c.cached_input_tokens for c in ledger.calls] == [1800, 0]
    assert ledger.totals().cached_input_tokens == 1800
