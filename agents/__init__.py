"""LLM roles and the multi-agent authoring loop, in three subpackages by role and a few shared modules.

- ``authoring``: the loop itself, `author(AuthorConfig, ...) -> RunReport` (async; ``author_sync``
  for plain callers): profile the handler in the sandbox, plan N briefs, run N slots (generate ->
  structure check -> verify -> refine/discard) concurrently with checkpointing, write accepted
  templates and a report; ``plan_briefs``, ``generate``, ``build_slot_graph``; the records
  ``Brief``, ``Attempt``, ``SlotResult``, ``RunReport``, ``PlanInfo``, ``SlotEvent``, ``Activity``.
- ``stages``: the verification stages the loop and `itemsmith verify` run: ``Verifier`` /
  ``VerificationResult`` / ``pass_through``, which stages run with which models, the stages
  themselves. It never imports ``authoring``.
- ``llm``: the model layer. ``make_model(ModelSpec) -> ModelHandle`` / ``make_chat_model(ModelSpec)``
  (providers ``openai``, ``anthropic``, ``openai_compatible``, ``local``, ``scripted``;
  ``register_provider``); ``complete(handle, messages, retry=RetryPolicy())``: one call with timeout,
  bounded retries on transient errors, usage and cost; inside ``stream_tokens(callback)`` it streams
  and reports tokens; ``CallUsage``, ``UsageTotals``; ``ScriptedChatModel``: recorded replies for tests.
- Shared by the subpackages: ``config`` (``AuthorConfig``), ``settings`` (``AgentSettings``:
  ``ITEMSMITH_*`` settings), ``errors``, ``profile`` (a handler's data as templates see it),
  ``feedback`` (a failed check as a message to the generator), ``extract`` (code out of a reply).

Names are imported lazily, so ``import itemsmith.agents.settings`` stays light.
"""

from __future__ import annotations

from itemsmith.agents._lazy import exports, lazy_getattr

_MODULES = {
    "authoring": ("Activity", "Attempt", "Brief", "PlanInfo", "RunReport", "SlotEvent", "SlotResult", "author",
                  "author_sync", "build_slot_graph", "generate", "plan_briefs"),
    "config": ("AuthorConfig",),
    "errors": ("AgentError", "EmptyReplyError", "LocalModelUnavailable", "PlanningError", "ProviderCallError",
               "ProviderConfigError"),
    "llm": ("LOCAL_MODELS", "PROVIDERS", "CallUsage", "ModelHandle", "ModelOptions", "ModelSpec", "RetryPolicy",
            "ScriptedChatModel", "UsageLedger", "UsageTotals", "complete", "make_chat_model", "make_model",
            "register_provider", "stream_tokens"),
    "llm.usage": ("UsageCallback",),
    "settings": ("AgentSettings",),
    "stages": ("VerificationResult", "Verifier", "pass_through"),
}
_EXPORTS = exports(__name__, _MODULES)

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
