"""The model layer: everything that names, builds, calls and meters a model.

- ``spec``: `ModelSpec` (``provider:model[@endpoint]``, parsed once where it enters) and
  `StudentSpec` (``SPEC@RANK``).
- ``providers``: the registry (`PROVIDERS`, `register_provider`, `make_model`, `check_spec`,
  `spec_pattern`, `missing_credentials`) and one module per provider (``openai``, ``anthropic``,
  ``openai_compatible``, ``local`` with ``llamacpp``, ``scripted``) on the `Provider` base
  (``providers.base``: call policy, concurrency limit, capabilities).
- ``catalog``: what each hosted model accepts and costs, the data file ``catalog.toml``.
- ``inference``: `complete`, one call with a timeout, retries through tenacity (Retry-After
  honoured, every wait bounded), streaming progress and usage.
- ``usage``: tokens and cost per call (`CallUsage`, `UsageLedger`, `UsageTotals`).
- ``factory``: judges, students, the solver and evaluated models built from specs, metered and
  failure-tolerant.

Names are imported lazily (``import itemsmith.agents.llm.spec`` stays free of LangChain).
"""

from __future__ import annotations

from itemsmith.agents._lazy import exports, lazy_getattr

_MODULES = {
    "catalog": ("Capabilities", "Price", "entry_for", "price_for"),
    "factory": ("CallLog", "build_judges", "build_respondent", "build_solver", "build_students", "retry_policy"),
    "inference": ("ModelHandle", "RetryPolicy", "complete", "reply_text", "stream_tokens"),
    "providers": ("PROVIDERS", "ModelOptions", "Provider", "SpecPolicy", "check_spec", "make_chat_model", "make_model",
                  "missing_credentials", "register_provider", "spec_pattern"),
    "providers.local": ("LOCAL_MODELS",),
    "providers.scripted": ("ScriptedChatModel",),
    "spec": ("ModelSpec", "ModelSpecField", "StudentSpec"),
    "usage": ("CallUsage", "UsageLedger", "UsageTotals", "cost_of"),
}
_EXPORTS = exports(__name__, _MODULES)

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
