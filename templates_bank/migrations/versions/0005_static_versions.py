"""Static template versions: a version's ``kind`` is ``code`` (template source) or ``static``
(a group of stored items imported from an existing benchmark); every stored version is code.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # ADD COLUMN with a constant default: no table copy on SQLite, so the append-only triggers stay
    op.add_column("template_versions", sa.Column("kind", sa.String(10), nullable=False, server_default="code"))


def downgrade() -> None:
    # DROP COLUMN in place (SQLite 3.35+, PostgreSQL): a batch copy would drop the triggers
    op.execute("ALTER TABLE template_versions DROP COLUMN kind")
