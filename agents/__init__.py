"""LLM roles and the multi-agent authoring loop.

Public API (imported lazily, so ``import agents.settings`` stays light):

- ``author(AuthorConfig, ...) -> RunReport`` (async; ``author_sync`` for plain callers): profile the
  handler in the sandbox, plan N briefs, run N slots (generate -> structure check -> verify ->
  refine/discard) concurrently with checkpointing, write accepted templates and a report.
- ``make_model(spec) -> ModelHandle`` / ``make_chat_model(spec)``: the provider registry
  (``openai``, ``anthropic``, ``openai_compatible``, ``local``, ``scripted``; ``register_provider``).
- ``complete(handle, messages, retry=RetryPolicy())``: one call with timeout, bounded retries on
  transient errors, usage and cost.
- ``plan_briefs``, ``generate``, ``build_slot_graph``: the planner, the generator, the LangGraph loop.
- ``Verifier`` / ``VerificationResult`` / ``pass_through``: the interface of the later
  verification stages.
- Records: ``Brief``, ``Attempt``, ``SlotResult``, ``RunReport``, ``PlanInfo``, ``SlotEvent``,
  ``CallUsage``, ``UsageTotals``.
- ``ScriptedChatModel``: recorded replies for tests. ``AgentSettings``: ``ITEMSMITH_*`` settings.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AuthorConfig": "agents.run", "author": "agents.run", "author_sync": "agents.run",
    "Attempt": "agents.models", "Brief": "agents.models", "PlanInfo": "agents.models",
    "RunReport": "agents.models", "SlotResult": "agents.models",
    "ModelOptions": "agents.providers", "ModelSpec": "agents.providers", "PROVIDERS": "agents.providers",
    "make_chat_model": "agents.providers", "make_model": "agents.providers", "register_provider": "agents.providers",
    "ModelHandle": "agents.inference", "RetryPolicy": "agents.inference", "complete": "agents.inference",
    "plan_briefs": "agents.planner", "generate": "agents.generator", "build_slot_graph": "agents.graph",
    "SlotEvent": "agents.context", "VerificationResult": "agents.verify", "Verifier": "agents.verify",
    "pass_through": "agents.verify", "ScriptedChatModel": "agents.scripted", "AgentSettings": "agents.settings",
    "CallUsage": "agents.usage", "UsageCallback": "agents.usage", "UsageLedger": "agents.usage",
    "UsageTotals": "agents.usage", "LOCAL_MODELS": "agents.local_models",
    "AgentError": "agents.errors", "EmptyReplyError": "agents.errors", "LocalModelUnavailable": "agents.errors",
    "PlanningError": "agents.errors", "ProviderCallError": "agents.errors", "ProviderConfigError": "agents.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
