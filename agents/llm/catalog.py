"""What each hosted model accepts and costs: one table, the data file `catalog.toml` next to this
module (read once, at import), used by the model factory for every entry point (author, recheck,
reverify, evaluate; command line and jobs).

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
threshold, Anthropic's 5-minute cache writes); the file says how to add a model.
"""

from __future__ import annotations

import logging
import re
import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CATALOG_FILE", "FREE_PROVIDERS", "MODEL_TABLE", "UNKNOWN_DEFAULTS", "Capabilities", "ModelEntry", "Price", "entry_for",
           "price_for"]

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


class _CatalogRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    price: Price


class _CatalogFile(BaseModel):
    """`catalog.toml` as written: families by name, and models and defaults naming a family."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    free_providers: frozenset[str]
    families: dict[str, Capabilities]
    unknown_defaults: dict[str, str]
    models: dict[str, _CatalogRow]


def _read(path: Path) -> tuple[dict[str, ModelEntry], dict[str, Capabilities], frozenset[str]]:
    """The model table, the unknown models' defaults and the free providers of a catalog file."""
    data = _CatalogFile.model_validate(tomllib.loads(path.read_text()))

    def family(name: str) -> Capabilities:
        if name not in data.families:
            raise ValueError(f"{path}: no family {name!r} (families: {', '.join(sorted(data.families))})")
        return data.families[name]

    table = {key: ModelEntry(capabilities=family(row.family), price=row.price) for key, row in data.models.items()}
    defaults = {provider: family(name) for provider, name in data.unknown_defaults.items()}
    return table, defaults, data.free_providers


CATALOG_FILE = Path(__file__).with_name("catalog.toml")
MODEL_TABLE, UNKNOWN_DEFAULTS, FREE_PROVIDERS = _read(CATALOG_FILE)
_PLAIN = Capabilities(temperature=True, reasoning=False)  # sampling allowed, no reasoning budget
_FREE = ModelEntry(capabilities=_PLAIN, price=Price(input=0, cached_input=0, output=0))
_SNAPSHOT = re.compile(r"^(?P<base>.+?)(?:-\d{4}-\d{2}-\d{2}|-\d{8})$")


def _lookup(provider: str, model: str) -> ModelEntry | None:
    if provider in FREE_PROVIDERS:
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
        return ModelEntry(capabilities=_PLAIN, known=False)
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
