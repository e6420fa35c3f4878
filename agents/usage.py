"""Token and cost accounting per LLM call, from the usage the provider reports.

`UsageCallback` is a LangChain callback: attach it to a call (``config={"callbacks": [cb]}``)
and it appends one `CallUsage` per model response to its `UsageLedger`. Cost comes from a
price table (USD per million tokens); a model missing from it has cost `None` (unknown), never
a guessed number. Local and scripted models cost 0.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from pydantic import BaseModel, Field

# USD per 1M (input, output) tokens. Longest prefix wins, so dated versions match their family.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "openai:gpt-4o-mini": (0.15, 0.60),
    "openai:gpt-4o": (2.50, 10.00),
    "openai:gpt-4.1-nano": (0.10, 0.40),
    "openai:gpt-4.1-mini": (0.40, 1.60),
    "openai:gpt-4.1": (2.00, 8.00),
    "openai:gpt-5-nano": (0.05, 0.40),
    "openai:gpt-5-mini": (0.25, 2.00),
    "openai:gpt-5": (1.25, 10.00),
    "openai:o3-mini": (1.10, 4.40),
    "openai:o4-mini": (1.10, 4.40),
    "anthropic:claude-3-5-haiku": (0.80, 4.00),
    "anthropic:claude-haiku-4-5": (1.00, 5.00),
    "anthropic:claude-3-7-sonnet": (3.00, 15.00),
    "anthropic:claude-sonnet-4": (3.00, 15.00),
    "anthropic:claude-opus-4": (15.00, 75.00),
    "local:": (0.0, 0.0),
    "scripted:": (0.0, 0.0),
}


def price_for(provider: str, model: str, prices: dict[str, tuple[float, float]] | None = None
              ) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for `provider:model`, or None when unknown."""
    table = PRICES_PER_MTOK if prices is None else prices
    key = f"{provider}:{model}"
    matches = [p for p in table if key.startswith(p)]
    return table[max(matches, key=len)] if matches else None


class CallUsage(BaseModel):
    """One model response: tokens as reported by the provider, cost, latency, retries."""

    provider: str
    model: str
    role: str = ""
    input_tokens: int = 0
    cached_input_tokens: int = 0  # of input_tokens, read from the provider's prompt cache
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    retries: int = 0


class UsageTotals(BaseModel):
    """Sums over calls; `cost_usd` is None if any call's cost is unknown."""

    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    retries: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: CallUsage | UsageTotals) -> UsageTotals:
        calls = other.calls if isinstance(other, UsageTotals) else 1
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return UsageTotals(calls=self.calls + calls, input_tokens=self.input_tokens + other.input_tokens,
                           cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
                           output_tokens=self.output_tokens + other.output_tokens, cost_usd=cost,
                           retries=self.retries + other.retries)


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


def cost_of(provider: str, model: str, input_tokens: int, output_tokens: int,
            prices: dict[str, tuple[float, float]] | None = None) -> float | None:
    price = price_for(provider, model, prices)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


class UsageCallback(BaseCallbackHandler):
    """Records the usage of each model response into a ledger (one entry per generation)."""

    def __init__(self, ledger: UsageLedger, *, provider: str, model: str, role: str = "",
                 prices: dict[str, tuple[float, float]] | None = None) -> None:
        self.ledger = ledger
        self.provider = provider
        self.model = model
        self.role = role
        self.prices = prices
        self.last: CallUsage | None = None

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration) or not isinstance(generation.message, AIMessage):
                    continue
                inp, out = usage_from_message(generation.message)
                call = CallUsage(provider=self.provider, model=self.model, role=self.role, input_tokens=inp,
                                 cached_input_tokens=cached_tokens_of(generation.message), output_tokens=out,
                                 cost_usd=cost_of(self.provider, self.model, inp, out, self.prices))
                self.last = call
                self.ledger.record(call)
