"""What the audit reads (draws of items); the report types live with the other verdicts in
`items.schema` and are re-exported here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from itemsmith.items.schema import AuditFinding as Finding
from itemsmith.items.schema import AuditReport, Item
from itemsmith.items.schema import AuditSolverResult as SolverResult

__all__ = ["AuditReport", "Finding", "ItemDraw", "SolverResult"]


class ItemDraw(BaseModel):
    """The items one run of a template produced: `question(num_samples)` under `seed`."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    num_samples: int
    items: list[Item]
