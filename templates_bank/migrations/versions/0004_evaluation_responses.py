"""Evaluation responses: every evaluated model's answer to every item (append-only), read by
calibration and by a resumed evaluation.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "evaluation_responses"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("evaluation_id", sa.String(100), nullable=False),
        sa.Column("template_version_id", sa.Integer(), sa.ForeignKey("template_versions.id"), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("text_format", sa.String(20), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=False),
        sa.Column("item_hash", sa.String(64), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=True),
        sa.Column("adaptive", sa.Boolean(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("choice", sa.Integer(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_evaluation_responses_evaluation_id", TABLE, ["evaluation_id"])
    op.create_index("ix_evaluation_responses_template_version_id", TABLE, ["template_version_id"])
    # append-only, like the other records (0001 created the PostgreSQL trigger function)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
                   "FOR EACH ROW EXECUTE FUNCTION itemsmith_append_only()")
        return
    for action in ("UPDATE", "DELETE"):
        op.execute(f"CREATE TRIGGER {TABLE}_no_{action.lower()} BEFORE {action} ON {TABLE} BEGIN "
                   f"SELECT RAISE(ABORT, 'itemsmith: {TABLE} is append-only ({action} refused)'); END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER {TABLE}_append_only ON {TABLE}")
    else:
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER {TABLE}_no_{action}")
    op.drop_index("ix_evaluation_responses_template_version_id", TABLE)
    op.drop_index("ix_evaluation_responses_evaluation_id", TABLE)
    op.drop_table(TABLE)
