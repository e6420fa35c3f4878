"""LLM roles and the multi-agent authoring loop.

Public API (imported lazily, so ``import agents.settings`` stays light):

- ``author(AuthorConfig, ...) -> RunReport`` (async; ``author_sync`` for plain callers): profile the
  handler in the sandbox, plan N briefs, run N slots (generate -> structure check -> verify ->
  refine/discard) concurrently with checkpointing, write accepted templates and a report.
- ``make_model(ModelSpec) -> ModelHandle`` / ``make_chat_model(ModelSpec)``: the provider registry
  (``openai``, ``anthropic``, ``openai_compatible``, ``local``, ``scripted``; ``register_provider``).
- ``complete(handle, messages, retry=RetryPolicy())``: one call with timeout, bounded retries on
  transient errors, usage and cost; inside ``stream_tokens(callback)`` it streams and reports tokens.
- ``plan_briefs``, ``generate``, ``build_slot_graph``: the planner, the generator, the LangGraph loop.
- ``Verifier`` / ``VerificationResult`` / ``pass_through``: the interface of the later
  verification stages.
- Records: ``Brief``, ``Attempt``, ``SlotResult``, ``RunReport``, ``PlanInfo``, ``SlotEvent``,
  ``Activity`` (live progress), ``CallUsage``, ``UsageTotals``.
- ``ScriptedChatModel``: recorded replies for tests. ``AgentSettings``: ``ITEMSMITH_*`` settings.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AuthorConfig": "itemsmith.agents.run", "author": "itemsmith.agents.run", "author_sync": "itemsmith.agents.run",
    "Attempt": "itemsmith.agents.models", "Brief": "itemsmith.agents.models", "PlanInfo": "itemsmith.agents.models",
    "RunReport": "itemsmith.agents.models", "SlotResult": "itemsmith.agents.models",
    "ModelOptions": "itemsmith.agents.llm.providers", "ModelSpec": "itemsmith.agents.llm.spec", "PROVIDERS": "itemsmith.agents.llm.providers",
    "make_chat_model": "itemsmith.agents.llm.providers", "make_model": "itemsmith.agents.llm.providers", "register_provider": "itemsmith.agents.llm.providers",
    "ModelHandle": "itemsmith.agents.llm.inference", "RetryPolicy": "itemsmith.agents.llm.inference", "complete": "itemsmith.agents.llm.inference",
    "stream_tokens": "itemsmith.agents.llm.inference", "Activity": "itemsmith.agents.context",
    "plan_briefs": "itemsmith.agents.planner", "generate": "itemsmith.agents.generator", "build_slot_graph": "itemsmith.agents.graph",
    "SlotEvent": "itemsmith.agents.context", "VerificationResult": "itemsmith.agents.verify", "Verifier": "itemsmith.agents.verify",
    "pass_through": "itemsmith.agents.verify", "ScriptedChatModel": "itemsmith.agents.llm.providers.scripted", "AgentSettings": "itemsmith.agents.settings",
    "CallUsage": "itemsmith.agents.llm.usage", "UsageCallback": "itemsmith.agents.llm.usage", "UsageLedger": "itemsmith.agents.llm.usage",
    "UsageTotals": "itemsmith.agents.llm.usage", "LOCAL_MODELS": "itemsmith.agents.llm.providers.local",
    "AgentError": "itemsmith.agents.errors", "EmptyReplyError": "itemsmith.agents.errors", "LocalModelUnavailable": "itemsmith.agents.errors",
    "PlanningError": "itemsmith.agents.errors", "ProviderCallError": "itemsmith.agents.errors", "ProviderConfigError": "itemsmith.agents.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
