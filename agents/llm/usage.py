"""Token and cost accounting per LLM call, from the usage the provider reports.

`UsageCallback` is a LangChain callback: attach it to a call (``config={"callbacks": [cb]}``)
and it appends one `CallUsage` per model response to its `UsageLedger`. Cost comes from the
model table (`agents.llm.catalog`: USD per million tokens, cached reads and cache writes
priced on their own); a model missing from it has cost `None` (unknown), never a guessed number.
Local and scripted models cost 0. Every call is counted by its outcome: answered, cut at the
output limit (or empty), or failed (no reply at all); reports show the three apart.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from pydantic import BaseModel, Field

from itemsmith.agents.llm.catalog import price_for

CallOutcome = Literal["answered", "cut", "failed"]


class CallUsage(BaseModel):
    """One model response: tokens as reported by the provider, cost, latency, retries."""

    provider: str
    model: str
    role: str = ""
    input_tokens: int = 0
    cached_input_tokens: int = 0  # of input_tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens, written to the provider's prompt cache
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    retries: int = 0
    outcome: CallOutcome = "answered"


class UsageTotals(BaseModel):
    """Sums over calls; `cost_usd` is None if any call's cost is unknown."""

    calls: int = Field(0, description="every call: answered, cut and failed")
    cut_calls: int = Field(0, description="replies cut at the output limit or empty: missing data")
    failed_calls: int = Field(0, description="calls with no reply (after the retries): missing data")
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    retries: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def answered_calls(self) -> int:
        return self.calls - self.cut_calls - self.failed_calls

    def add(self, other: CallUsage | UsageTotals) -> UsageTotals:
        if isinstance(other, UsageTotals):
            calls, cut, failed = other.calls, other.cut_calls, other.failed_calls
        else:
            calls, cut, failed = 1, int(other.outcome == "cut"), int(other.outcome == "failed")
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return UsageTotals(calls=self.calls + calls, cut_calls=self.cut_calls + cut,
                           failed_calls=self.failed_calls + failed, input_tokens=self.input_tokens + other.input_tokens,
                           cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
                           cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
                           output_tokens=self.output_tokens + other.output_tokens, cost_usd=cost,
                           retries=self.retries + other.retries)

    def counts(self) -> dict[str, Any]:
        """The numbers a report shows: calls by outcome, tokens (cached apart) and cost."""
        return {"calls": self.calls, "answered_calls": self.answered_calls, "cut_calls": self.cut_calls,
                "failed_calls": self.failed_calls, "retries": self.retries, "input_tokens": self.input_tokens,
                "cached_input_tokens": self.cached_input_tokens, "cache_write_tokens": self.cache_write_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd}


class UsageLedger(BaseModel):
    """Every call of a run (or a slot), in order; thread-safe appends."""

    calls: list[CallUsage] = Field(default_factory=list)

    def model_post_init(self, context: Any) -> None:
        self._lock = threading.Lock()

    def record(self, call: CallUsage) -> None:
        with self._lock:
            self.calls.append(call)

    def totals(self) -> UsageTotals:
        totals = UsageTotals()
        for call in list(self.calls):
            totals = totals.add(call)
        return totals


def usage_from_message(message: AIMessage) -> tuple[int, int]:
    """(input, output) tokens of a reply: LangChain's `usage_metadata`, else the raw metadata."""
    meta = message.usage_metadata
    if meta:
        return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    raw = (message.response_metadata or {}).get("token_usage") or (message.response_metadata or {}).get("usage") or {}
    inp = raw.get("prompt_tokens", raw.get("input_tokens", 0)) or 0
    out = raw.get("completion_tokens", raw.get("output_tokens", 0)) or 0
    return int(inp), int(out)


def cached_tokens_of(message: AIMessage) -> int:
    """Input tokens a reply read from the provider's prompt cache (Anthropic cache reads, OpenAI
    cached prompt tokens; both reported by LangChain as ``input_token_details.cache_read``)."""
    details = (message.usage_metadata or {}).get("input_token_details") or {}
    return int(details.get("cache_read", 0) or 0)


def cache_write_tokens_of(message: AIMessage) -> int:
    """Input tokens a reply wrote to the provider's prompt cache (Anthropic's cache creation;
    LangChain splits it by lifetime when the provider does)."""
    details = (message.usage_metadata or {}).get("input_token_details") or {}
    keys = ("cache_creation", "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
    return sum(int(details.get(key) or 0) for key in keys)


def cost_of(provider: str, model: str, input_tokens: int, output_tokens: int, *, cached_tokens: int = 0,
            cache_write_tokens: int = 0) -> float | None:
    """USD of one call from the model table; None when the model's price is unknown."""
    price = price_for(provider, model)
    if price is None:
        return None
    return price.cost(input_tokens, output_tokens, cached_tokens, cache_write_tokens)


def call_usage(message: AIMessage, *, provider: str, model: str, role: str = "", outcome: CallOutcome = "answered",
               latency_s: float = 0.0, retries: int = 0) -> CallUsage:
    """One reply's usage and cost, cached reads and cache writes priced on their own."""
    inp, out = usage_from_message(message)
    cached, written = cached_tokens_of(message), cache_write_tokens_of(message)
    return CallUsage(provider=provider, model=model, role=role, input_tokens=inp, cached_input_tokens=cached,
                     cache_write_tokens=written, output_tokens=out, outcome=outcome, latency_s=latency_s,
                     retries=retries, cost_usd=cost_of(provider, model, inp, out, cached_tokens=cached,
                                                       cache_write_tokens=written))


class UsageCallback(BaseCallbackHandler):
    """Records the usage of each model response into a ledger (one entry per generation)."""

    def __init__(self, ledger: UsageLedger, *, provider: str, model: str, role: str = "") -> None:
        self.ledger = ledger
        self.provider = provider
        self.model = model
        self.role = role
        self.last: CallUsage | None = None

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration) or not isinstance(generation.message, AIMessage):
                    continue
                call = call_usage(generation.message, provider=self.provider, model=self.model, role=self.role)
                self.last = call
                self.ledger.record(call)
