"""Every evaluated model's answer to every item it was shown (``evaluation_responses``): what
calibration reads besides the student pool's answers, and what a failed evaluation resumes from.

Append-only like the other records: the session refuses to flush a change and the migration's
triggers refuse it in the database.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, event, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from itemsmith.templates_bank.storage._errors import NotFoundError
from itemsmith.templates_bank.storage._models import Base, ImmutableRecordError, TemplateVersionRow
from itemsmith.templates_bank.storage._types import utcnow

__all__ = ["EvaluationResponseCreate", "EvaluationResponsePublic", "EvaluationResponseRow",
           "cached_evaluation_response", "list_evaluation_responses", "record_evaluation_response"]


class EvaluationResponseRow(Base):
    """One evaluated model's answer to one item of a template version, in one text format."""

    __tablename__ = "evaluation_responses"
    __table_args__ = (
        Index("ix_evaluation_responses_evaluation_id", "evaluation_id"),
        Index("ix_evaluation_responses_template_version_id", "template_version_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    evaluation_id: Mapped[str] = mapped_column(String(100))
    template_version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"))
    model: Mapped[str] = mapped_column(String(200))
    text_format: Mapped[str] = mapped_column(String(20))
    seed: Mapped[int] = mapped_column(Integer)
    item_index: Mapped[int] = mapped_column(Integer)
    item_hash: Mapped[str] = mapped_column(String(64))
    prompt_hash: Mapped[str | None] = mapped_column(String(64))
    adaptive: Mapped[bool] = mapped_column(Boolean)
    raw: Mapped[str] = mapped_column(Text)
    choice: Mapped[int | None] = mapped_column(Integer)
    correct: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


@event.listens_for(Session, "before_flush")
def _refuse_changes(session: Session, flush_context: object, instances: object) -> None:
    for obj in (*session.dirty, *session.deleted):
        if isinstance(obj, EvaluationResponseRow) and (obj in session.deleted or session.is_modified(obj)):
            raise ImmutableRecordError("evaluation_responses records are append-only; add a new record instead")


class EvaluationResponseCreate(BaseModel):
    """What one answer of an evaluated model records."""

    model_config = ConfigDict(extra="forbid")

    evaluation_id: str = Field(min_length=1, max_length=100)
    template_version_id: int
    model: str = Field(min_length=1, max_length=200)
    text_format: str
    seed: int
    item_index: int = Field(ge=0)
    item_hash: str
    prompt_hash: str | None = None
    adaptive: bool = False
    raw: str
    choice: int | None
    correct: bool


class EvaluationResponsePublic(EvaluationResponseCreate):
    model_config = ConfigDict(from_attributes=True)

    id: int
    created_at: datetime


def record_evaluation_response(session: Session, response: EvaluationResponseCreate) -> EvaluationResponsePublic:
    if session.get(TemplateVersionRow, response.template_version_id) is None:
        raise NotFoundError(f"no template version with id {response.template_version_id}")
    row = EvaluationResponseRow(**response.model_dump())
    session.add(row)
    session.flush()
    return EvaluationResponsePublic.model_validate(row)


def list_evaluation_responses(session: Session, *, evaluation_id: str | None = None,
                              version_ids: list[int] | None = None) -> list[EvaluationResponsePublic]:
    """Responses of one evaluation and/or to some template versions, oldest first."""
    query = select(EvaluationResponseRow)
    if evaluation_id is not None:
        query = query.where(EvaluationResponseRow.evaluation_id == evaluation_id)
    if version_ids is not None:
        query = query.where(EvaluationResponseRow.template_version_id.in_(version_ids))
    return [EvaluationResponsePublic.model_validate(r)
            for r in session.scalars(query.order_by(EvaluationResponseRow.id))]


def cached_evaluation_response(session: Session, version_id: int, *, model: str, prompt_hash: str,
                               item_hash: str) -> EvaluationResponsePublic | None:
    """The newest answer an evaluation of this model gave to this prompt and item of the version,
    if any (a re-verification's student is served it like an answer of its own)."""
    row = session.scalar(select(EvaluationResponseRow).where(
        EvaluationResponseRow.template_version_id == version_id, EvaluationResponseRow.model == model,
        EvaluationResponseRow.prompt_hash == prompt_hash, EvaluationResponseRow.item_hash == item_hash)
        .order_by(EvaluationResponseRow.id.desc()).limit(1))
    return None if row is None else EvaluationResponsePublic.model_validate(row)
