"""Initial bank schema: banks, template versions, verdicts, student responses, review
decisions, releases; append-only triggers.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
APPEND_ONLY = ("template_versions", "verdicts", "student_responses", "review_decisions", "releases",
               "release_templates")


def _created_at() -> sa.Column:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def _version_fk() -> sa.Column:
    return sa.Column("template_version_id", sa.Integer(), sa.ForeignKey("template_versions.id"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "banks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("handler", sa.String(500), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        _created_at(),
    )
    op.create_table(
        "template_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("bank_id", sa.Integer(), sa.ForeignKey("banks.id"), nullable=False),
        sa.Column("template_key", sa.String(200), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("category", sa.String(100), nullable=False),
        sa.Column("concepts", JSON, nullable=False),
        sa.Column("handler", sa.String(500), nullable=True),
        sa.Column("difficulty", sa.String(20), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("provenance", JSON, nullable=False),
        sa.Column("parent_version_id", sa.Integer(), sa.ForeignKey("template_versions.id"), nullable=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        _created_at(),
        sa.UniqueConstraint("bank_id", "content_hash", name="uq_template_versions_bank_id_content_hash"),
    )
    op.create_index("ix_template_versions_bank_id_template_key", "template_versions", ["bank_id", "template_key"])
    op.create_table(
        "verdicts",
        sa.Column("id", sa.Integer(), primary_key=True),
        _version_fk(),
        sa.Column("stage", sa.String(20), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("prompt_hash", sa.String(64), nullable=True),
        sa.Column("item_hash", sa.String(64), nullable=True),
        sa.Column("run_id", sa.String(100), nullable=True),
        _created_at(),
    )
    op.create_index("ix_verdicts_template_version_id_stage", "verdicts", ["template_version_id", "stage"])
    op.create_index("ix_verdicts_cache_key", "verdicts", ["stage", "model", "prompt_hash", "item_hash"])
    op.create_table(
        "student_responses",
        sa.Column("id", sa.Integer(), primary_key=True),
        _version_fk(),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=False),
        sa.Column("item_hash", sa.String(64), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=True),
        sa.Column("blind", sa.Boolean(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("choice", sa.Integer(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("run_id", sa.String(100), nullable=True),
        _created_at(),
    )
    op.create_index("ix_student_responses_cache_key", "student_responses", ["model", "prompt_hash", "item_hash"])
    op.create_index("ix_student_responses_template_version_id", "student_responses", ["template_version_id"])
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.Integer(), primary_key=True),
        _version_fk(),
        sa.Column("decision", sa.String(10), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        _created_at(),
        sa.CheckConstraint("decision IN ('approve', 'reject')", name="decision"),
    )
    op.create_index("ix_review_decisions_template_version_id", "review_decisions", ["template_version_id"])
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("bank_id", sa.Integer(), sa.ForeignKey("banks.id"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("manifest", JSON, nullable=False),
        sa.Column("checksum", sa.String(64), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        _created_at(),
        sa.UniqueConstraint("bank_id", "number", name="uq_releases_bank_id_number"),
    )
    op.create_table(
        "release_templates",
        sa.Column("release_id", sa.Integer(), sa.ForeignKey("releases.id"), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        _version_fk(),
        sa.Column("seeds", JSON, nullable=False),
        sa.Column("num_samples", sa.Integer(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("items_sha256", sa.String(64), nullable=False),
        sa.UniqueConstraint("release_id", "template_version_id", name="uq_release_templates_release_id_version"),
    )
    _create_append_only_triggers()


def downgrade() -> None:
    _drop_append_only_triggers()
    for table in ("release_templates", "releases", "review_decisions", "student_responses", "verdicts",
                  "template_versions", "banks"):
        op.drop_table(table)


def _create_append_only_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION itemsmith_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'itemsmith: % is append-only (% refused)', TG_TABLE_NAME, TG_OP; END $$"
        )
        for table in APPEND_ONLY:
            op.execute(f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION itemsmith_append_only()")
        return
    for table in APPEND_ONLY:
        for action in ("UPDATE", "DELETE"):
            op.execute(f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} BEGIN "
                       f"SELECT RAISE(ABORT, 'itemsmith: {table} is append-only ({action} refused)'); END")


def _drop_append_only_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER {table}_append_only ON {table}")
        op.execute("DROP FUNCTION itemsmith_append_only()")
        return
    for table in APPEND_ONLY:
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER {table}_no_{action}")
