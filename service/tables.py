"""The service's tables (SQLAlchemy 2 ORM): API keys, jobs and their progress events.

They share the bank's declarative `Base` (one database, one metadata, one Alembic migration
chain in ``templates_bank/migrations``: revision 0002 creates these tables) but belong to the
service: the bank never reads them. Unlike the bank's records they are mutable (a job's status,
progress and lease change while it runs; a key is revoked).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from itemsmith.templates_bank.storage import Base, utcnow

__all__ = ["ApiKeyRow", "JobEventRow", "JobRow"]


class ApiKeyRow(Base):
    """An API key of the service: only the sha256 of the key is stored; ``owner`` is the principal
    whose banks the key sees (several keys may share an owner)."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(200), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]


class JobRow(Base):
    """A long-running job (authoring, re-verification, evaluation). ``request`` is the job's
    input as JSON, ``result`` its output; ``lease_until`` is how long the worker that claimed it
    holds it (an expired lease means the worker died and the job may be claimed again)."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name="status"),
        Index("ix_jobs_owner_created_at", "owner", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    kind: Mapped[str] = mapped_column(String(30))
    owner: Mapped[str] = mapped_column(String(200))
    bank_id: Mapped[int | None] = mapped_column(ForeignKey("banks.id"))
    status: Mapped[str] = mapped_column(String(12), default="queued")
    request: Mapped[dict[str, Any]]
    result: Mapped[dict[str, Any] | None]
    error: Mapped[str | None] = mapped_column(Text)
    progress: Mapped[dict[str, Any]]
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class JobEventRow(Base):
    """One progress event of a job, numbered from 1 within the job (the server-sent-event id)."""

    __tablename__ = "job_events"
    __table_args__ = (UniqueConstraint("job_id", "seq", name="uq_job_events_job_id_seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(30))
    payload: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
