"""A failed, empty or cut call is missing data, never an answer or a verdict; retries follow the
provider's Retry-After within a total wait bound (scripted models, no network)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from itemsmith.agents.errors import ProviderCallError
from itemsmith.agents.llm.factory import CallLog, StudentModel, _cache_breakpoint
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete, retry_after_s
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.agents.llm.usage import UsageLedger
from itemsmith.items.schema import Item
from itemsmith.verification.judges import CRITERION_MARKER
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import AnswerCache, PoolConfig, StudentCall, StudentConfig, aanswer_template

NO_WAIT = RetryPolicy(max_retries=3, initial_s=0, max_s=0)


class RateLimited(Exception):
    def __init__(self, headers: dict[str, str], status_code: int = 429) -> None:
        super().__init__(f"Error code: {status_code} - rate limited")
        self.status_code = status_code
        self.headers = headers


class Sequenced(BaseChatModel):
    """Raises the queued errors, then answers; records when each call came."""

    errors: list[Exception]
    reply: str = "Answer: A"
    times: list[float]

    @property
    def _llm_type(self) -> str:
        return "sequenced"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.times.append(time.monotonic())
        if self.errors:
            raise self.errors.pop(0)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply))])


def test_retry_after_headers_are_read_in_every_published_form() -> None:
    assert retry_after_s(RateLimited({"retry-after": "2"})) == 2.0
    assert retry_after_s(RateLimited({"retry-after-ms": "1500"})) == 1.5
    assert retry_after_s(RateLimited({"x-ratelimit-reset-requests": "1m0.5s", "x-ratelimit-reset-tokens": "20ms"})) \
        == pytest.approx(60.5)
    assert retry_after_s(RateLimited({})) is None
    assert retry_after_s(ValueError("no headers")) is None


def test_scripted_429_waits_what_the_provider_asks_not_the_backoff() -> None:
    model = Sequenced(errors=[RateLimited({"retry-after": "0.3"})], times=[])
    reply, usage = asyncio.run(complete(ModelHandle(model, "scripted", "m", 5.0), [HumanMessage("q")],
                                        retry=NO_WAIT))
    assert reply.text == "Answer: A" and usage.retries == 1
    assert model.times[1] - model.times[0] >= 0.3  # the backoff alone would have waited 0 s


def test_scripted_429_whose_wait_passes_the_bound_fails_at_once_saying_so() -> None:
    model = Sequenced(errors=[RateLimited({"retry-after": "20"})], times=[])
    ledger = UsageLedger()
    with pytest.raises(ProviderCallError) as failed:
        asyncio.run(complete(ModelHandle(model, "scripted", "m", 5.0), [HumanMessage("q")],
                             retry=NO_WAIT.model_copy(update={"max_wait_s": 5}), ledger=ledger))
    assert "wait bound" in str(failed.value) and "asks to wait 20 s" in str(failed.value)
    assert "rate limited" in str(failed.value)  # the provider's own message
    assert len(model.times) == 1 and ledger.totals().failed_calls == 1


def test_scripted_429s_whose_waits_together_pass_the_bound_fail_on_the_wait_that_would_pass_it() -> None:
    model = Sequenced(errors=[RateLimited({"retry-after": "0.2"}) for _ in range(3)], times=[])
    ledger = UsageLedger()
    with pytest.raises(ProviderCallError) as failed:
        asyncio.run(complete(ModelHandle(model, "scripted", "m", 5.0), [HumanMessage("q")],
                             retry=NO_WAIT.model_copy(update={"max_wait_s": 0.3}), ledger=ledger))
    assert "wait bound" in str(failed.value) and "0.2 s waited of at most 0.3 s" in str(failed.value)
    assert len(model.times) == 2 and failed.value.attempts == 2  # one wait of 0.2 s fits, a second would not
    assert model.times[1] - model.times[0] >= 0.2 and ledger.calls[0].retries == 1


def test_scripted_permanent_4xx_is_never_re_asked() -> None:
    for status in (400, 401, 403, 404, 422):
        model = Sequenced(errors=[RateLimited({"retry-after": "0"}, status_code=status)], times=[])
        with pytest.raises(ProviderCallError, match="permanent error"):
            asyncio.run(complete(ModelHandle(model, "scripted", "m", 5.0), [HumanMessage("q")], retry=NO_WAIT))
        assert len(model.times) == 1, status


class RecordingCache(AnswerCache):
    def __init__(self) -> None:
        self.stored: list[Any] = []

    def get(self, call: StudentCall) -> Any:
        return None

    def put(self, call: StudentCall, response: Any) -> None:
        self.stored.append(response)


def _sample() -> TemplateSample:
    item = Item(question="Which is largest?", options=["1", "2", "3"], answer_index=2,
                series=[{"name": "v", "values": [1.0, 2.0, 3.0]}])
    return TemplateSample(template_id="t", items=[item, item.model_copy(update={"answer_index": 0})])


@pytest.mark.parametrize("script", [[{"error": 401}], [""], [{"content": "Answer", "finish_reason": "length"}]],
                         ids=["failed", "empty", "cut"])
def test_scripted_student_call_without_usable_reply_is_not_a_response_and_not_stored(script: list[Any]) -> None:
    handle = ModelHandle(ScriptedChatModel.from_source(script), "scripted", "s", 5.0)
    log = CallLog()
    student = StudentModel(StudentConfig(name="s", rank=1), handle).bind(log, NO_WAIT)
    cache = RecordingCache()
    report = asyncio.run(aanswer_template(_sample(), [student], PoolConfig(blind=False), cache=cache))
    assert report.responses == [] and len(report.failed) == 2 and cache.stored == []
    assert report.accuracies() == {}  # nothing counted as wrong
    totals = log.ledger.totals()
    assert totals.answered_calls == 0 and totals.calls == totals.failed_calls + totals.cut_calls > 0


def test_scripted_student_answers_are_still_responses_control() -> None:
    handle = ModelHandle(ScriptedChatModel.from_source(["Answer: C"]), "scripted", "s", 5.0)
    student = StudentModel(StudentConfig(name="s", rank=1), handle).bind(CallLog(), NO_WAIT)
    cache = RecordingCache()
    report = asyncio.run(aanswer_template(_sample(), [student], PoolConfig(blind=False), cache=cache))
    assert len(report.responses) == 2 and not report.failed and len(cache.stored) == 2
    assert report.accuracies() == {"s": 0.5}


def _judge_messages(shared_chars: int) -> list[BaseMessage]:
    return [SystemMessage("system"), HumanMessage("x" * shared_chars + CRITERION_MARKER + "relevance. ...")]


def test_anthropic_breakpoint_only_where_the_prefix_reaches_the_model_minimum() -> None:
    short = _judge_messages(3_000)  # ~750 tokens: below a 1024-token minimum
    assert _cache_breakpoint(short, 1024) == short
    long = _judge_messages(5_000)  # ~1250 tokens
    marked = _cache_breakpoint(long, 1024)
    assert marked[-1].content[0]["cache_control"] == {"type": "ephemeral"}
    assert _cache_breakpoint(long, 4096) == long  # Haiku 4.5 / Opus 4.5 need 4096
