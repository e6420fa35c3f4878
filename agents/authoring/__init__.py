"""Authoring: the multi-agent loop that turns a handler and a task into accepted templates.

- ``run``: `author` (async; `author_sync` for plain callers) profiles the handler in the sandbox,
  plans the briefs, runs the slots concurrently with checkpointing and writes the templates and
  the report; `slot_result`, `new_run_id`, `FINAL` (a slot's final phases) for the service's job.
- ``planner`` (with ``brief_check`` and ``taxonomy``): `plan_briefs`, `fallback_briefs`.
- ``generator`` and ``prompts``: `build_prompt`, `generate`, the prompts the generator is shown.
- ``graph`` (with ``state``): `build_slot_graph`, one slot's LangGraph loop (generate -> structure
  check -> verification stages -> refine or discard).
- ``context``: what a slot shares with its run, and the live records `SlotEvent` and `Activity`;
  ``progress``: `ProgressTable`, their rendering in the terminal.
- ``checkpoint``: `open_checkpointer`, `setup_checkpointer` (SQLite or Postgres, for resuming).
- ``models``: the run's records `Brief`, `Attempt`, `SlotResult`, `PlanInfo`, `RunReport`;
  ``template_kind``: `TemplateKind`, what a written template computes.

The verification stages a slot runs come from `itemsmith.agents.stages`, the models from
`itemsmith.agents.llm`; neither imports this package. Names are imported lazily.
"""

from __future__ import annotations

from itemsmith.agents._lazy import exports, lazy_getattr

_MODULES = {
    "checkpoint": ("open_checkpointer", "setup_checkpointer"),
    "context": ("Activity", "SlotEvent"),
    "generator": ("build_prompt", "generate"),
    "graph": ("build_slot_graph",),
    "models": ("Attempt", "Brief", "PlanInfo", "RunReport", "SlotResult"),
    "planner": ("fallback_briefs", "plan_briefs"),
    "progress": ("ProgressTable",),
    "run": ("FINAL", "author", "author_sync", "new_run_id", "slot_result"),
    "template_kind": ("TemplateKind", "template_kind"),
}
_EXPORTS = exports(__name__, _MODULES)

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
