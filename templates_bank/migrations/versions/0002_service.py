"""The service's tables: API keys (hashed), jobs and their progress events.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def _timestamp(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        _timestamp("created_at"),
        _timestamp("revoked_at", nullable=True),
    )
    op.create_index("ix_api_keys_owner", "api_keys", ["owner"])
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("bank_id", sa.Integer(), sa.ForeignKey("banks.id"), nullable=True),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("request", JSON, nullable=False),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("progress", JSON, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("worker", sa.String(200), nullable=True),
        _timestamp("lease_until", nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name="status"),
    )
    op.create_index("ix_jobs_owner_created_at", "jobs", ["owner", "created_at"])
    op.create_table(
        "job_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job_id", sa.String(32), sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        _timestamp("created_at"),
        sa.UniqueConstraint("job_id", "seq", name="uq_job_events_job_id_seq"),
    )


def downgrade() -> None:
    for table in ("job_events", "jobs", "api_keys"):
        op.drop_table(table)
