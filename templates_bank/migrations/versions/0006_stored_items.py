"""Stored release items: every item of a release is kept once, content-addressed (``items``:
sha256 of its JSON -> the JSON), the release's order of them in ``release_items``, and item plots
rendered for exports cached by item hash (``item_plots``). Releases made before have no rows
here: they are read by regeneration until `itemsmith release verify` stores their items.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("items", "release_items")


def upgrade() -> None:
    op.create_table(
        "items",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("body", sa.Text(), nullable=False),
    )
    op.create_table(
        "release_items",
        sa.Column("release_id", sa.Integer(), sa.ForeignKey("releases.id"), primary_key=True),
        sa.Column("ordinal", sa.Integer(), primary_key=True),
        sa.Column("template_position", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("item_sha256", sa.String(64), sa.ForeignKey("items.sha256"), nullable=False),
    )
    op.create_table(
        "item_plots",
        sa.Column("item_sha256", sa.String(64), primary_key=True),
        sa.Column("dpi", sa.Integer(), primary_key=True),
        sa.Column("renderer", sa.String(64), primary_key=True),
        sa.Column("png", sa.LargeBinary(), nullable=False),
    )
    # append-only, like the other records (0001 created the PostgreSQL trigger function); the
    # plot cache is not a record: a plot is added once per renderer and never changed either way
    for table in APPEND_ONLY:
        if op.get_bind().dialect.name == "postgresql":
            op.execute(f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION itemsmith_append_only()")
            continue
        for action in ("UPDATE", "DELETE"):
            op.execute(f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} BEGIN "
                       f"SELECT RAISE(ABORT, 'itemsmith: {table} is append-only ({action} refused)'); END")


def downgrade() -> None:
    for table in APPEND_ONLY:
        if op.get_bind().dialect.name == "postgresql":
            op.execute(f"DROP TRIGGER {table}_append_only ON {table}")
        else:
            for action in ("update", "delete"):
                op.execute(f"DROP TRIGGER {table}_no_{action}")
    for table in ("item_plots", "release_items", "items"):
        op.drop_table(table)
