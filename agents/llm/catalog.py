"""What each hosted model accepts and costs: one table, read by the model factory for every entry
point (author, recheck, reverify, evaluate; command line and jobs).

`MODEL_TABLE` maps an exact ``provider:model`` id to its `ModelEntry`: the family's
`Capabilities` (whether temperature/top_p may be sent, whether hidden reasoning tokens are spent
inside the completion budget, log-probability support, the shortest prompt prefix the provider
caches) and its `Price` (USD per million tokens: input, cached-input read, cache write, output).
A dated snapshot (``gpt-5-2025-08-07``, ``claude-sonnet-4-5-20250929``) is its base id; any other
id is looked up exactly, so ``gpt-5-pro`` and ``gpt-5.4`` never take ``gpt-5``'s row.

A well-formed id of a known provider that the table lacks gets its provider's conservative
defaults (`UNKNOWN_DEFAULTS`: no temperature, the reasoning budget, no log-probabilities, the
largest cache minimum, cost unknown rather than guessed) and one notice per process
(`entry_for`). Local and scripted models cost nothing; an OpenAI-compatible server's capabilities
come from its endpoint settings.

Prices are the providers' published list prices (standard tier, prompts under any long-context
threshold, Anthropic's 5-minute cache writes).
"""

from __future__ import annotations

import logging
import re
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MODEL_TABLE", "UNKNOWN_DEFAULTS", "Capabilities", "ModelEntry", "Price", "entry_for", "price_for"]

log = logging.getLogger("itemsmith.models")


class Capabilities(BaseModel):
    """What a model family accepts and returns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: bool = Field(description="temperature and top_p may be sent (else the API rejects them)")
    reasoning: bool = Field(description="hidden reasoning tokens are spent inside the completion budget")
    logprobs: bool = Field(False, description="token log-probabilities are returned (judges, students use them)")
    cache_min_tokens: int = Field(0, ge=0, description="shortest prompt prefix the provider caches (0: none)")


class Price(BaseModel):
    """USD per million tokens. ``cache_write`` None: writing the cache costs the input rate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    cached_input: float = Field(ge=0, description="input tokens read from the provider's prompt cache")
    output: float = Field(ge=0)
    cache_write: float | None = Field(None, ge=0, description="input tokens written to the cache")

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        """USD of one call; `input_tokens` counts every prompt token, cached and written ones included."""
        fresh = max(0, input_tokens - cached_tokens - cache_write_tokens)
        write = self.input if self.cache_write is None else self.cache_write
        return (fresh * self.input + cached_tokens * self.cached_input + cache_write_tokens * write
                + output_tokens * self.output) / 1_000_000


class ModelEntry(BaseModel):
    """One model id: its family's capabilities and its price (None: unknown, never guessed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    capabilities: Capabilities
    price: Price | None = None
    known: bool = True


# --- families -------------------------------------------------------------------------------

_GPT4 = Capabilities(temperature=True, reasoning=False, logprobs=True, cache_min_tokens=1024)
_GPT5 = Capabilities(temperature=False, reasoning=True, logprobs=False, cache_min_tokens=1024)
_O_SERIES = Capabilities(temperature=False, reasoning=True, logprobs=False, cache_min_tokens=1024)
_CLAUDE_1K = Capabilities(temperature=True, reasoning=False, cache_min_tokens=1024)
_CLAUDE_2K = Capabilities(temperature=True, reasoning=False, cache_min_tokens=2048)
_CLAUDE_4K = Capabilities(temperature=True, reasoning=False, cache_min_tokens=4096)
_CLAUDE_NO_SAMPLING = Capabilities(temperature=False, reasoning=False, cache_min_tokens=4096)


def _openai(capabilities: Capabilities, input_: float, cached: float, output: float) -> ModelEntry:
    return ModelEntry(capabilities=capabilities, price=Price(input=input_, cached_input=cached, output=output))


def _anthropic(capabilities: Capabilities, input_: float, output: float) -> ModelEntry:
    """Anthropic bills cache reads at 0.1x and 5-minute cache writes at 1.25x the input rate."""
    return ModelEntry(capabilities=capabilities, price=Price(input=input_, cached_input=round(input_ * 0.1, 6),
                                                             cache_write=round(input_ * 1.25, 6), output=output))


MODEL_TABLE: dict[str, ModelEntry] = {
    "openai:gpt-4o": _openai(_GPT4, 2.50, 1.25, 10.00),
    "openai:gpt-4o-mini": _openai(_GPT4, 0.15, 0.075, 0.60),
    "openai:gpt-4.1": _openai(_GPT4, 2.00, 0.50, 8.00),
    "openai:gpt-4.1-mini": _openai(_GPT4, 0.40, 0.10, 1.60),
    "openai:gpt-4.1-nano": _openai(_GPT4, 0.10, 0.025, 0.40),
    "openai:gpt-5": _openai(_GPT5, 1.25, 0.125, 10.00),
    "openai:gpt-5-mini": _openai(_GPT5, 0.25, 0.025, 2.00),
    "openai:gpt-5-nano": _openai(_GPT5, 0.05, 0.005, 0.40),
    "openai:gpt-5-pro": _openai(_GPT5, 15.00, 15.00, 120.00),  # no cached-input discount
    "openai:gpt-5.1": _openai(_GPT5, 1.25, 0.125, 10.00),
    "openai:gpt-5.2": _openai(_GPT5, 1.75, 0.175, 14.00),
    "openai:gpt-5.2-pro": _openai(_GPT5, 21.00, 21.00, 168.00),
    "openai:o1": _openai(_O_SERIES, 15.00, 7.50, 60.00),
    "openai:o1-pro": _openai(_O_SERIES, 150.00, 150.00, 600.00),
    "openai:o3": _openai(_O_SERIES, 2.00, 0.50, 8.00),
    "openai:o3-pro": _openai(_O_SERIES, 20.00, 20.00, 80.00),
    "openai:o3-mini": _openai(_O_SERIES, 1.10, 0.55, 4.40),
    "openai:o4-mini": _openai(_O_SERIES, 1.10, 0.275, 4.40),
    "anthropic:claude-opus-4-7": _anthropic(_CLAUDE_NO_SAMPLING, 5.00, 25.00),
    "anthropic:claude-opus-4-6": _anthropic(_CLAUDE_4K, 5.00, 25.00),
    "anthropic:claude-opus-4-5": _anthropic(_CLAUDE_4K, 5.00, 25.00),
    "anthropic:claude-opus-4-1": _anthropic(_CLAUDE_1K, 15.00, 75.00),
    "anthropic:claude-opus-4": _anthropic(_CLAUDE_1K, 15.00, 75.00),
    "anthropic:claude-opus-4-0": _anthropic(_CLAUDE_1K, 15.00, 75.00),
    "anthropic:claude-sonnet-4-6": _anthropic(_CLAUDE_2K, 3.00, 15.00),
    "anthropic:claude-sonnet-4-5": _anthropic(_CLAUDE_1K, 3.00, 15.00),
    "anthropic:claude-sonnet-4": _anthropic(_CLAUDE_1K, 3.00, 15.00),
    "anthropic:claude-sonnet-4-0": _anthropic(_CLAUDE_1K, 3.00, 15.00),
    "anthropic:claude-3-7-sonnet": _anthropic(_CLAUDE_1K, 3.00, 15.00),
    "anthropic:claude-haiku-4-5": _anthropic(_CLAUDE_4K, 1.00, 5.00),
    "anthropic:claude-3-5-haiku": _anthropic(_CLAUDE_2K, 0.80, 4.00),
}

# a known provider's model the table lacks: nothing the API might reject, the reasoning budget, cost unknown
UNKNOWN_DEFAULTS: dict[str, Capabilities] = {
    "openai": Capabilities(temperature=False, reasoning=True, logprobs=False, cache_min_tokens=1024),
    "anthropic": Capabilities(temperature=False, reasoning=False, logprobs=False, cache_min_tokens=4096),
}
_FREE = ModelEntry(capabilities=Capabilities(temperature=True, reasoning=False), price=Price(input=0, cached_input=0,
                                                                                            output=0))
_SNAPSHOT = re.compile(r"^(?P<base>.+?)(?:-\d{4}-\d{2}-\d{2}|-\d{8})$")


def _lookup(provider: str, model: str) -> ModelEntry | None:
    if provider in ("local", "scripted"):
        return _FREE
    entry = MODEL_TABLE.get(f"{provider}:{model}")
    if entry is None and (snapshot := _SNAPSHOT.match(model)) is not None:
        entry = MODEL_TABLE.get(f"{provider}:{snapshot.group('base')}")
    return entry


def entry_for(provider: str, model: str) -> ModelEntry:
    """The model's row; a hosted model the table lacks gets its provider's conservative defaults,
    with one notice per process. A provider without a table (OpenAI-compatible servers) gets
    sampling allowed and no reasoning budget: its endpoint settings say the rest."""
    entry = _lookup(provider, model)
    if entry is not None:
        return entry
    defaults = UNKNOWN_DEFAULTS.get(provider)
    if defaults is None:
        return ModelEntry(capabilities=Capabilities(temperature=True, reasoning=False), known=False)
    _notice(provider, model)
    return ModelEntry(capabilities=defaults, known=False)


@cache
def _notice(provider: str, model: str) -> None:
    log.warning("%s:%s is not in itemsmith's model table: conservative defaults (no temperature, %s, no logprobs), "
                "cost unknown", provider, model,
                "reasoning budget" if UNKNOWN_DEFAULTS[provider].reasoning else "plain budget")


def price_for(provider: str, model: str) -> Price | None:
    """The model's price, None when unknown (never a family's guess)."""
    entry = _lookup(provider, model)
    return entry.price if entry is not None else None
