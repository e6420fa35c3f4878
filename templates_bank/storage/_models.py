"""The bank's tables (SQLAlchemy 2 ORM). The schema itself is created by the Alembic
migrations in ``templates_bank/migrations``; these classes must match them (a test compares).
The service's tables (API keys, jobs, job events) share `Base` and live in `itemsmith.service.tables`.

Append-only: template versions, verdicts, student responses, review decisions and releases are
never updated or deleted. The session refuses to flush such a change (`ImmutableRecordError`)
and database triggers refuse it for anyone who bypasses the ORM.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from itemsmith.templates_bank.storage._types import JSONType, UTCDateTime, utcnow

__all__ = [
    "APPEND_ONLY_TABLES", "Base", "BankRow", "BankSession", "ImmutableRecordError", "ReleaseRow", "ReleaseTemplateRow",
    "ReviewDecisionRow", "StudentResponseRow", "TemplateSummaryCountRow", "TemplateSummaryRow", "TemplateVersionRow", "VerdictRow",
]

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class ImmutableRecordError(RuntimeError):
    """An append-only record was about to be updated or deleted."""


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONType, list[Any]: JSONType, datetime: UTCDateTime}


class BankRow(Base):
    """One bank per dataset and task; its name is unique among its owner's banks."""

    __tablename__ = "banks"
    __table_args__ = (UniqueConstraint("owner", "name", name="uq_banks_owner_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    handler: Mapped[str] = mapped_column(String(500))
    task: Mapped[str] = mapped_column(Text, default="")
    owner: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TemplateVersionRow(Base):
    """An immutable template version, keyed by the sha256 of its source within its bank; a
    ``static`` version's source is a group of stored items (an imported benchmark)."""

    __tablename__ = "template_versions"
    __table_args__ = (
        UniqueConstraint("bank_id", "content_hash", name="uq_template_versions_bank_id_content_hash"),
        Index("ix_template_versions_bank_id_template_key", "bank_id", "template_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bank_id: Mapped[int] = mapped_column(ForeignKey("banks.id"))
    template_key: Mapped[str] = mapped_column(String(200))
    content_hash: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(10), default="code", server_default="code")  # code | static
    source: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(String(500))
    category: Mapped[str] = mapped_column(String(100))
    concepts: Mapped[list[Any]]
    handler: Mapped[str | None] = mapped_column(String(500))
    difficulty: Mapped[str | None] = mapped_column(String(20))
    rationale: Mapped[str | None] = mapped_column(Text)
    provenance: Mapped[dict[str, Any]]
    parent_version_id: Mapped[int | None] = mapped_column(ForeignKey("template_versions.id"))
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class VerdictRow(Base):
    """A typed verdict record (structure, judge, capability, irt, decision) as JSON, with the
    cache key of the model call behind it where there was one."""

    __tablename__ = "verdicts"
    __table_args__ = (
        Index("ix_verdicts_template_version_id_stage", "template_version_id", "stage"),
        Index("ix_verdicts_cache_key", "stage", "model", "prompt_hash", "item_hash"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    template_version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"))
    stage: Mapped[str] = mapped_column(String(20))
    payload: Mapped[dict[str, Any]]
    model: Mapped[str | None] = mapped_column(String(200))
    prompt_hash: Mapped[str | None] = mapped_column(String(64))
    item_hash: Mapped[str | None] = mapped_column(String(64))
    run_id: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class StudentResponseRow(Base):
    """One student's answer to one item; (model, prompt_hash, item_hash) is the cache key."""

    __tablename__ = "student_responses"
    __table_args__ = (
        Index("ix_student_responses_cache_key", "model", "prompt_hash", "item_hash"),
        Index("ix_student_responses_template_version_id", "template_version_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    template_version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"))
    model: Mapped[str] = mapped_column(String(200))
    rank: Mapped[int] = mapped_column(Integer)
    item_index: Mapped[int] = mapped_column(Integer)
    item_hash: Mapped[str] = mapped_column(String(64))
    prompt_hash: Mapped[str | None] = mapped_column(String(64))
    blind: Mapped[bool] = mapped_column(Boolean)
    raw: Mapped[str] = mapped_column(Text)
    choice: Mapped[int | None] = mapped_column(Integer)
    correct: Mapped[bool] = mapped_column(Boolean)
    run_id: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReviewDecisionRow(Base):
    """A person's approve/reject decision on a template version."""

    __tablename__ = "review_decisions"
    __table_args__ = (CheckConstraint("decision IN ('approve', 'reject')", name="decision"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    template_version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"), index=True)
    decision: Mapped[str] = mapped_column(String(10))
    reviewer: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReleaseRow(Base):
    """A frozen, numbered bank state; ``manifest`` is the `ReleaseManifest` as JSON."""

    __tablename__ = "releases"
    __table_args__ = (UniqueConstraint("bank_id", "number", name="uq_releases_bank_id_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bank_id: Mapped[int] = mapped_column(ForeignKey("banks.id"))
    number: Mapped[int] = mapped_column(Integer)
    manifest: Mapped[dict[str, Any]]
    checksum: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReleaseTemplateRow(Base):
    """A template version in a release, with the seeds and sample count its items come from."""

    __tablename__ = "release_templates"
    __table_args__ = (
        UniqueConstraint("release_id", "template_version_id", name="uq_release_templates_release_id_version"),
    )

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    template_version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"))
    seeds: Mapped[list[Any]]
    num_samples: Mapped[int] = mapped_column(Integer)
    item_count: Mapped[int] = mapped_column(Integer)
    items_sha256: Mapped[str] = mapped_column(String(64))


class TemplateSummaryRow(Base):
    """What the review listing shows and filters of one version, kept current on every write of
    its verdicts and reviews (see `storage._summaries`); not append-only."""

    __tablename__ = "template_summaries"
    __table_args__ = (
        Index("ix_template_summaries_bank_latest", "bank_id", "is_latest", "version_id"),
        Index("ix_template_summaries_bank_status", "bank_id", "status", "version_id"),
        Index("ix_template_summaries_bank_score", "bank_id", "is_latest", "judge_score"),
    )

    version_id: Mapped[int] = mapped_column(ForeignKey("template_versions.id"), primary_key=True)
    bank_id: Mapped[int] = mapped_column(ForeignKey("banks.id"))
    template_key: Mapped[str] = mapped_column(String(200))
    category: Mapped[str] = mapped_column(String(100))
    is_latest: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(12))
    decision_stage: Mapped[str | None] = mapped_column(String(20))
    judge_score: Mapped[float | None] = mapped_column(Float)
    judge_run: Mapped[str | None] = mapped_column(String(100))
    irt: Mapped[dict[str, Any] | None]
    decision: Mapped[dict[str, Any] | None]


class TemplateSummaryCountRow(Base):
    """How many summaries of a bank have each (newest?, status, category, decision stage): the
    listing's total without counting rows (``decision_stage`` '' for none); kept with the summaries."""

    __tablename__ = "template_summary_counts"

    bank_id: Mapped[int] = mapped_column(ForeignKey("banks.id"), primary_key=True)
    is_latest: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    status: Mapped[str] = mapped_column(String(12), primary_key=True)
    category: Mapped[str] = mapped_column(String(100), primary_key=True)
    decision_stage: Mapped[str] = mapped_column(String(20), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


APPEND_ONLY = (TemplateVersionRow, VerdictRow, StudentResponseRow, ReviewDecisionRow, ReleaseRow, ReleaseTemplateRow)
APPEND_ONLY_TABLES = tuple(cls.__tablename__ for cls in APPEND_ONLY)


class BankSession(Session):
    """A session that refuses to flush an update or delete of an append-only record."""


@event.listens_for(BankSession, "before_flush")
def _refuse_changes(session: Session, flush_context: object, instances: object) -> None:
    for obj in (*session.dirty, *session.deleted):
        if isinstance(obj, APPEND_ONLY) and (obj in session.deleted or session.is_modified(obj)):
            raise ImmutableRecordError(f"{type(obj).__tablename__} records are append-only; "
                                       "add a new version or record instead of changing one")
