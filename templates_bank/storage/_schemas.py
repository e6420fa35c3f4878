"""Pydantic models at the storage boundary: what callers create and what they get back."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.schema import (
    AuditReport,
    CapabilityVerdict,
    Decision,
    IRTParameters,
    JudgeScore,
    Provenance,
    RederivationReport,
    StructureReport,
    StudentResponse,
    Template,
    TemplateKind,
)

__all__ = [
    "STAGE_RECORDS", "BankCreate", "BankPublic", "ReviewCreate", "ReviewPublic", "Stage", "StudentResponsePublic",
    "TemplateVersionPublic", "VerdictPublic", "VerdictRecord",
]

Stage = Literal["structure", "audit", "rederivation", "judge", "capability", "irt", "decision"]
VerdictRecord = (StructureReport | AuditReport | RederivationReport | JudgeScore | CapabilityVerdict | IRTParameters
                 | Decision)
STAGE_RECORDS: dict[Stage, type[VerdictRecord]] = {
    "structure": StructureReport,
    "audit": AuditReport,
    "rederivation": RederivationReport,
    "judge": JudgeScore,
    "capability": CapabilityVerdict,
    "irt": IRTParameters,
    "decision": Decision,
}
NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"


class BankCreate(BaseModel):
    """A new bank: one per dataset (``handler``: a built-in name or a handler file) and task."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=NAME_PATTERN)
    handler: str = Field(min_length=1, max_length=500)
    task: str = ""
    owner: str = Field(min_length=1, max_length=200)


class BankPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    handler: str
    task: str
    owner: str
    created_at: datetime


class TemplateVersionPublic(BaseModel):
    """An immutable template version; ``content_hash`` is the sha256 of its source."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    bank_id: int
    template_key: str
    content_hash: str
    kind: TemplateKind = "code"
    source: str
    title: str
    category: str
    concepts: list[str]
    handler: str | None
    difficulty: Literal["easy", "medium", "hard"] | None
    rationale: str | None
    provenance: Provenance
    parent_version_id: int | None
    created_by: str
    created_at: datetime

    def to_template(self) -> Template:
        return Template(id=self.template_key, source=self.source, title=self.title, category=self.category,
                        concepts=self.concepts, handler=self.handler, difficulty=self.difficulty,
                        rationale=self.rationale, provenance=self.provenance, kind=self.kind)


class VerdictPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    template_version_id: int
    stage: Stage
    payload: dict[str, Any]
    model: str | None
    prompt_hash: str | None
    item_hash: str | None
    run_id: str | None
    created_at: datetime

    @property
    def record(self) -> VerdictRecord:
        """The payload as its typed record (`JudgeScore`, `Decision`, ...)."""
        return STAGE_RECORDS[self.stage].model_validate(self.payload)


class StudentResponsePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    template_version_id: int
    model: str
    rank: int
    item_index: int
    item_hash: str
    prompt_hash: str | None
    blind: bool
    raw: str
    choice: int | None
    correct: bool
    run_id: str | None
    created_at: datetime

    @property
    def record(self) -> StudentResponse:
        return StudentResponse(student=self.model, rank=self.rank, item_index=self.item_index, blind=self.blind,
                               raw=self.raw, choice=self.choice, correct=self.correct)


class ReviewCreate(BaseModel):
    """A person's decision on a template version."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "reject"]
    reviewer: str = Field(min_length=1, max_length=200)
    note: str = ""


class ReviewPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    template_version_id: int
    decision: Literal["approve", "reject"]
    reviewer: str
    note: str
    created_at: datetime
