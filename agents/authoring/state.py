"""The state of one template slot in the authoring graph.

Every value is plain JSON (dicts, lists, strings, numbers) so any checkpointer (SQLite,
PostgreSQL) stores and restores it exactly; pydantic models are rebuilt at the edges.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class SlotState(TypedDict, total=False):
    slot: int
    brief: dict[str, Any]  # agents.authoring.models.Brief
    round: int  # rounds started
    first_prompt: str  # the round-1 user message, reused verbatim by refinements (same prefix)
    source: str | None  # the candidate of the current round
    reply_shown: str | None  # what the assistant turn of a refinement shows (the last code)
    feedback: str | None  # what the next round must fix
    current: dict[str, Any]  # the attempt in progress (agents.authoring.models.Attempt)
    report: dict[str, Any] | None  # the last StructureReport
    attempts: Annotated[list[dict[str, Any]], operator.add]  # finished attempts, appended by nodes
    status: str  # running | accepted | discarded | errored (resumable) | failed (older runs)
    retry_at: str | None  # where an errored slot re-enters: generate | verify
    structure_passed_round: int | None
    decision: dict[str, Any] | None  # items.schema.Decision
    error: str | None
    elapsed_s: Annotated[float, operator.add]
