"""One LLM call: a timeout, bounded retries with backoff on transient errors only, and usage.

Transient: HTTP 429 and 5xx, timeouts, connection errors. Anything else (a bad request, an
authentication error, a missing model) fails at once, with the provider's own message. A 429 or
503 that says when to come back (``Retry-After``, ``retry-after-ms``, ``x-ratelimit-reset-*``) is
retried after that wait, not the backoff's; every wait of one call counts against
`RetryPolicy.max_wait_s`, and a wait that would pass it ends the call at once, saying so. The
attempts run through tenacity (`AsyncRetrying`: which errors, how long to wait, when to stop).
Provider clients are built with their own retries off, so this is the only retry layer and every
retry is bounded and visible. A model's
handle may carry its provider's (or endpoint's) own retry count and say that a timed-out call is
not sent again; those override the caller's `RetryPolicy`.

Streaming progress: inside a `stream_tokens(callback)` block, `complete` streams the reply of a
model that can stream (`astream`: OpenAI, Anthropic, OpenAI-compatible servers, scripted models)
and calls `callback(n)` with the output tokens so far (the chunks received); an in-process
llama.cpp model reports every sampled token itself (`token_listener`). Every call ends with the
provider's count of the whole reply; usage accounting is the same streamed or not.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, message_chunk_to_message
from pydantic import BaseModel, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base

from itemsmith.agents.errors import EmptyReplyError, ProviderCallError
from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.usage import CallOutcome, CallUsage, UsageLedger, call_usage

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_TRANSIENT_NAMES = frozenset({
    "APITimeoutError", "APIConnectionError", "RateLimitError", "InternalServerError", "ServiceUnavailableError",
    "OverloadedError", "TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout",
    "ConnectError", "ReadError", "RemoteProtocolError",
})


class RetryPolicy(BaseModel):
    """Bounded exponential backoff with full jitter."""

    max_retries: int = Field(3, ge=0, le=10)
    initial_s: float = Field(1.0, ge=0)
    max_s: float = Field(30.0, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_wait_s: float = Field(300.0, ge=0, description="all the waits of one call together, the provider's included")

    def delay(self, retry: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        cap = min(self.max_s, self.initial_s * self.multiplier ** (retry - 1))
        return (rng or random).uniform(cap / 2, cap) if cap > 0 else 0.0


def status_code_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (openai, anthropic, httpx), if any."""
    for attr in ("status_code", "status", "http_status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


_DURATION = re.compile(r"(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _headers_of(exc: BaseException) -> Any:
    headers = getattr(exc, "headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def _seconds(value: str) -> float | None:
    """A header's wait: seconds (``20``, ``1.5``), a duration (``6m0s``, ``20ms``) or an HTTP date."""
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = list(_DURATION.finditer(value))
    if parts and "".join(p.group(0) for p in parts) == value:
        return sum(float(p.group("value")) * _UNIT_S[p.group("unit")] for p in parts)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after_s(exc: BaseException) -> float | None:
    """The wait the provider asks for with its error, in seconds (None: it names none). The
    longest of ``retry-after-ms``, ``Retry-After`` and OpenAI's ``x-ratelimit-reset-*`` (a 429 may
    name the requests and the tokens window: both must have reset)."""
    headers = _headers_of(exc)
    if headers is None:
        return None
    waits: list[float] = []
    millis = headers.get("retry-after-ms")
    if millis is not None and (ms := _seconds(str(millis))) is not None:
        waits.append(ms / 1000)
    for name in ("retry-after", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
        value = headers.get(name)
        if value is not None and (wait := _seconds(str(value))) is not None:
            waits.append(wait)
    return max(waits) if waits else None


def hit_output_limit(message: AIMessage) -> bool:
    """Whether the provider says the reply stopped at its output limit (OpenAI-style and llama.cpp
    `finish_reason`, Anthropic's `stop_reason`)."""
    metadata = message.response_metadata or {}
    return metadata.get("finish_reason") in ("length", "max_tokens") or metadata.get("stop_reason") == "max_tokens"


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying: 429/5xx, timeouts, connection failures."""
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    status = status_code_of(exc)
    if status is not None:
        return status in TRANSIENT_STATUS or status >= 500
    return any(klass.__name__ in _TRANSIENT_NAMES for klass in type(exc).__mro__)


@dataclass(frozen=True)
class ModelHandle:
    """A chat model with what accounting needs: provider, model name, and its call policy."""

    model: BaseChatModel
    provider: str
    name: str
    timeout_s: float
    max_concurrency: int | None = None  # e.g. 1 for an in-process model: calls are serialized anyway
    max_retries: int | None = None  # the provider's or endpoint's own; None: the caller's RetryPolicy
    retry_timeouts: bool = True  # False: a timed-out call is final (a slow server would only queue it again)
    capabilities: Capabilities | None = None  # the model table's row (None: a model built outside the providers)

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.name}"


class TokenCallback(Protocol):
    """Told the output tokens of the model call in flight so far (a call starts at 0). A model that
    reads its prompt before the first token (a local one) says first how many prompt tokens it has
    to read, with ``tokens=0``."""

    def __call__(self, tokens: int, prompt_tokens: int | None = None) -> None: ...


_ON_TOKENS: ContextVar[TokenCallback | None] = ContextVar("itemsmith_on_tokens", default=None)


@contextmanager
def stream_tokens(callback: TokenCallback) -> Iterator[None]:
    """Within this block (this task and the tasks and threads it starts), `complete` reports the
    output tokens of each call in flight to `callback` as they arrive (a new call starts from 0)."""
    token = _ON_TOKENS.set(callback)
    try:
        yield
    finally:
        _ON_TOKENS.reset(token)


def token_listener() -> TokenCallback | None:
    """The callback of the enclosing `stream_tokens` block, if any (for models that count their own tokens)."""
    return _ON_TOKENS.get()


def _streams(model: Any) -> bool:
    """Whether `model` implements streaming itself (else `astream` would only wrap one `ainvoke`)."""
    return isinstance(model, BaseChatModel) and (type(model)._astream is not BaseChatModel._astream
                                                 or type(model)._stream is not BaseChatModel._stream)


async def _streamed(model: BaseChatModel, messages: list[BaseMessage], on_tokens: TokenCallback,
                    options: dict[str, Any]) -> Any:
    """The whole reply of a streamed call, reporting the output tokens so far after each chunk."""
    reply: AIMessageChunk | None = None
    chunks = 0
    on_tokens(0)
    async for chunk in model.astream(messages, **options):
        if not isinstance(chunk, AIMessageChunk):
            raise ProviderCallError(f"{type(model).__name__} streamed {type(chunk).__name__}, not a message chunk")
        reply = chunk if reply is None else reply + chunk
        chunks += 1
        on_tokens(chunks)
    return AIMessage(content="") if reply is None else message_chunk_to_message(reply)


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in type(exc).__name__


def _retried(handle: ModelHandle) -> Callable[[BaseException], bool]:
    """Which errors of `handle`'s calls are sent again: transient ones, a timeout only where the
    handle allows it."""
    return lambda exc: is_transient(exc) and (handle.retry_timeouts or not _timed_out(exc))


def _wait(retry: RetryPolicy) -> Callable[[RetryCallState], float]:
    """The wait before the next attempt: the provider's (`retry_after_s`) where it names one, else the backoff's."""
    def wait(state: RetryCallState) -> float:
        asked = retry_after_s(_error_of(state))
        return retry.delay(state.attempt_number) if asked is None else asked
    return wait


class _PastWaitBound(stop_base):
    """Stops where the next wait would take the call's waits together past `max_wait_s`."""

    def __init__(self, max_wait_s: float) -> None:
        self.max_wait_s = max_wait_s

    def __call__(self, state: RetryCallState) -> bool:
        return state.idle_for + (state.upcoming_sleep or 0.0) > self.max_wait_s


def _error_of(state: RetryCallState) -> BaseException:
    assert state.outcome is not None and (error := state.outcome.exception()) is not None  # called after a failure
    return error


def _why(handle: ModelHandle, exc: BaseException, state: RetryCallState, retry: RetryPolicy,
         max_retries: int) -> tuple[str, bool]:
    """What ended the call's attempts, as the failure's message, and whether the error is transient."""
    attempt = state.attempt_number
    detail = (f"timed out after {handle.timeout_s:g} s" if isinstance(exc, (TimeoutError, asyncio.TimeoutError))
              else f"{type(exc).__name__}: {_short(exc)}")
    if _timed_out(exc) and not handle.retry_timeouts:
        return (f"{handle.spec} call failed (timed out; timed-out calls are not retried for this provider, "
                f"{attempt} attempt(s)): {detail}"), True
    if not is_transient(exc) or attempt > max_retries:
        why = "retries exhausted" if is_transient(exc) else "permanent error"
        return f"{handle.spec} call failed ({why}, {attempt} attempt(s)): {detail}", is_transient(exc)
    wait = state.upcoming_sleep
    said = f"the provider asks to wait {wait:g} s" if retry_after_s(exc) is not None else f"the next wait is {wait:g} s"
    return (f"{handle.spec} call failed (wait bound: {said}, {state.idle_for:g} s waited of at most "
            f"{retry.max_wait_s:g} s, ITEMSMITH_MAX_RETRY_WAIT_S; {attempt} attempt(s)): {detail}"), True


async def complete(handle: ModelHandle, messages: Sequence[BaseMessage], *, retry: RetryPolicy,
                   ledger: UsageLedger | None = None, role: str = "",
                   temperature: float | None = None, capped: bool = False) -> tuple[AIMessage, CallUsage]:
    """Call the model once (plus bounded retries) and return its reply and usage.

    `temperature` overrides the model's for this call; with `capped` the reply is capped on purpose
    (a score or a letter read from its first tokens), so reaching the cap is no cut. Raises `ProviderCallError` on a permanent
    error or when retries run out, and `EmptyReplyError` when the reply has no text. Inside a
    `stream_tokens` block a model that can stream is streamed (see the module docstring).
    """
    options: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
    on_tokens = _ON_TOKENS.get()
    max_retries = retry.max_retries if handle.max_retries is None else handle.max_retries
    retrying = AsyncRetrying(retry=retry_if_exception(_retried(handle)), wait=_wait(retry),
                             stop=stop_after_attempt(max_retries + 1) | _PastWaitBound(retry.max_wait_s),
                             reraise=True)
    state: RetryCallState | None = None
    try:
        async for attempt in retrying:
            with attempt:
                state = attempt.retry_state
                started = time.monotonic()
                call = (_streamed(handle.model, list(messages), on_tokens, options)
                        if on_tokens is not None and _streams(handle.model)
                        else handle.model.ainvoke(list(messages), **options))
                reply = await asyncio.wait_for(call, timeout=handle.timeout_s)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the attempts are over: classified, re-raised as ProviderCallError
        assert state is not None
        message, transient = _why(handle, exc, state, retry, max_retries)
        raise _failed(handle, ledger, role, state.attempt_number, message, transient=transient) from exc
    assert state is not None
    attempts = state.attempt_number
    if not isinstance(reply, AIMessage):
        raise _failed(handle, ledger, role, attempts, f"{handle.spec} returned {type(reply).__name__}, not a chat "
                      "message", transient=False) from TypeError(type(reply).__name__)
    empty = not reply_text(reply).strip()
    outcome: CallOutcome = "cut" if empty or (hit_output_limit(reply) and not capped) else "answered"
    usage = call_usage(reply, provider=handle.provider, model=handle.name, role=role, outcome=outcome,
                       latency_s=time.monotonic() - started, retries=attempts - 1)
    if ledger is not None:
        ledger.record(usage)
    if on_tokens is not None and usage.output_tokens:
        on_tokens(usage.output_tokens)  # the provider's count of the whole reply
    if empty:
        cut = " at the output limit (reasoning tokens count inside it)" if hit_output_limit(reply) else ""
        raise EmptyReplyError(f"{handle.spec} returned an empty reply{cut} ({usage.output_tokens} output tokens)")
    return reply, usage


def _failed(handle: ModelHandle, ledger: UsageLedger | None, role: str, attempts: int, message: str, *,
            transient: bool) -> ProviderCallError:
    """The error of a call that failed for good, recorded in `ledger` as a failed call."""
    if ledger is not None:
        ledger.record(CallUsage(provider=handle.provider, model=handle.name, role=role, cost_usd=0.0,
                                retries=attempts - 1, outcome="failed"))
    return ProviderCallError(message, transient=transient, attempts=attempts)


def reply_text(message: AIMessage) -> str:
    """The text of a reply (string content, or the text blocks of a content list)."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|sk-ant-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9._\-]{8,})")


def redact(text: str) -> str:
    """Masks anything shaped like an API key or bearer token."""
    return _KEY_LIKE.sub("[redacted]", text)


def _short(exc: BaseException, limit: int = 300) -> str:
    text = redact(" ".join(str(exc).split()))
    return text if len(text) <= limit else text[:limit] + "..."
