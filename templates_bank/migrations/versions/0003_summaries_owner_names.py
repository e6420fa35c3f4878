"""Bank names unique per owner; per-version summaries of the review listing and their counts
per bank, backfilled.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_NULLABLE_JSON = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
_CHUNK = 5000
# 0001 declared banks.name unique without a name; this names it so batch mode can drop it on SQLite
_NAMED = {"uq": "uq_%(table_name)s_%(column_0_name)s"}


@contextmanager
def _foreign_keys_off() -> Iterator[None]:
    """SQLite alters a table by copying it, and dropping the old copy fails while rows point at it
    and foreign keys are on. The pragma is ignored inside a transaction: the open one is committed
    first (SQLite migrations are not atomic across this step), and again before the check is on."""
    raw = op.get_bind().connection.dbapi_connection
    assert raw is not None
    raw.commit()
    raw.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
        problems = raw.execute("PRAGMA foreign_key_check").fetchall()
        if problems:
            raise RuntimeError(f"foreign keys broken by the table copy: {problems[:5]}")
        raw.commit()
    finally:
        raw.execute("PRAGMA foreign_keys = ON")


def _unique_per_owner() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        with _foreign_keys_off(), op.batch_alter_table("banks", naming_convention=_NAMED,
                                                       recreate="always") as batch:
            batch.drop_constraint("uq_banks_name", type_="unique")
            batch.create_unique_constraint("uq_banks_owner_name", ["owner", "name"])
        return
    for constraint in sa.inspect(bind).get_unique_constraints("banks"):
        if constraint["column_names"] == ["name"]:
            op.drop_constraint(constraint["name"], "banks", type_="unique")
    op.create_unique_constraint("uq_banks_owner_name", "banks", ["owner", "name"])


def _summaries_table() -> None:
    op.create_table(
        "template_summaries",
        sa.Column("version_id", sa.Integer(), sa.ForeignKey("template_versions.id"), primary_key=True),
        sa.Column("bank_id", sa.Integer(), sa.ForeignKey("banks.id"), nullable=False),
        sa.Column("template_key", sa.String(200), nullable=False),
        sa.Column("category", sa.String(100), nullable=False),
        sa.Column("is_latest", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("decision_stage", sa.String(20), nullable=True),
        sa.Column("judge_score", sa.Float(), nullable=True),
        sa.Column("judge_run", sa.String(100), nullable=True),
        sa.Column("irt", JSON, nullable=True),
        sa.Column("decision", JSON, nullable=True),
    )
    op.create_index("ix_template_summaries_bank_latest", "template_summaries", ["bank_id", "is_latest", "version_id"])
    op.create_index("ix_template_summaries_bank_status", "template_summaries", ["bank_id", "status", "version_id"])
    op.create_index("ix_template_summaries_bank_score", "template_summaries", ["bank_id", "is_latest", "judge_score"])
    op.create_table(
        "template_summary_counts",
        sa.Column("bank_id", sa.Integer(), sa.ForeignKey("banks.id"), primary_key=True),
        sa.Column("is_latest", sa.Boolean(), primary_key=True),
        sa.Column("status", sa.String(12), primary_key=True),
        sa.Column("category", sa.String(100), primary_key=True),
        sa.Column("decision_stage", sa.String(20), primary_key=True),
        sa.Column("count", sa.Integer(), nullable=False),
    )


def _rows(bind: sa.Connection, statement: str) -> Iterator[Any]:
    yield from bind.execute(sa.text(statement)).yield_per(_CHUNK)


def _backfill() -> None:
    """The summaries of the versions already stored (the rule of `storage._summaries`)."""
    bind = op.get_bind()
    versions: dict[int, dict[str, Any]] = {}
    newest: dict[tuple[int, str], int] = {}
    for vid, bank_id, key, category in _rows(bind, "SELECT id, bank_id, template_key, category FROM template_versions "
                                                   "ORDER BY id"):
        versions[vid] = {"version_id": vid, "bank_id": bank_id, "template_key": key, "category": category,
                         "status": "pending", "decision_stage": None, "judge_score": None, "judge_run": None,
                         "irt": None, "decision": None}
        newest[(bank_id, key)] = vid
    if not versions:
        return
    latest_ids = set(newest.values())
    panels: dict[int, dict[Any, list[float]]] = {}
    last_run: dict[int, Any] = {}
    verdicts = bind.execute(sa.text("SELECT template_version_id, stage, payload, run_id FROM verdicts "
                                    "WHERE stage IN ('decision', 'irt', 'judge') ORDER BY id").columns(
        sa.column("template_version_id", sa.Integer()), sa.column("stage", sa.String()), sa.column("payload", JSON),
        sa.column("run_id", sa.String()))).yield_per(_CHUNK)
    for vid, stage, payload, run_id in verdicts:
        summary = versions[vid]
        if stage == "decision":
            summary["decision"] = payload
        elif stage == "irt":
            summary["irt"] = payload
        else:
            scores = panels.setdefault(vid, {}).setdefault(run_id, [])
            if payload.get("score") is not None:
                scores.append(float(payload["score"]))
            last_run[vid] = run_id
    reviews = dict(_rows(bind, "SELECT template_version_id, decision FROM review_decisions ORDER BY id"))
    for vid, summary in versions.items():
        decision, review = summary["decision"], reviews.get(vid)
        if decision is not None:
            summary["status"] = "accepted" if decision.get("accepted") else "declined"
            summary["decision_stage"] = decision.get("stage")
        if review is not None:
            summary["status"] = "approved" if review == "approve" else "rejected"
        if vid in last_run:
            scores = panels[vid][last_run[vid]]
            summary["judge_run"] = last_run[vid]
            summary["judge_score"] = round(sum(scores) / len(scores), 3) if scores else None
        summary["is_latest"] = vid in latest_ids
    table = sa.table("template_summaries", *(sa.column(name) for name in (
        "version_id", "bank_id", "template_key", "category", "is_latest", "status", "decision_stage", "judge_score",
        "judge_run")), sa.column("irt", _NULLABLE_JSON), sa.column("decision", _NULLABLE_JSON))
    values = list(versions.values())
    for start in range(0, len(values), _CHUNK):
        bind.execute(table.insert(), values[start:start + _CHUNK])
    op.execute("INSERT INTO template_summary_counts (bank_id, is_latest, status, category, decision_stage, count) "
               "SELECT bank_id, is_latest, status, category, COALESCE(decision_stage, ''), count(*) "
               "FROM template_summaries GROUP BY bank_id, is_latest, status, category, COALESCE(decision_stage, '')")


def upgrade() -> None:
    _unique_per_owner()
    _summaries_table()
    _backfill()


def downgrade() -> None:
    op.drop_table("template_summary_counts")
    op.drop_table("template_summaries")
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        with _foreign_keys_off(), op.batch_alter_table("banks", recreate="always") as batch:
            batch.drop_constraint("uq_banks_owner_name", type_="unique")
            batch.create_unique_constraint("uq_banks_name", ["name"])
        return
    op.drop_constraint("uq_banks_owner_name", "banks", type_="unique")
    op.create_unique_constraint("uq_banks_name", "banks", ["name"])
