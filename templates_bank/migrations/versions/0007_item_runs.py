"""Item runs: the items each (template, seed) run gave, by the run's key (a sha256 over the template
source, the handler's code and data, the seed, the sample count and the code and libraries that
generate items), so that `release create` reuses a run instead of running it again. Append-only.
Releases made before record none: their runs are generated again the first time.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "item_runs"
JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("items", JSON, nullable=False),
    )
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
    op.drop_table(TABLE)
