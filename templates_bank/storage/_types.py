"""Column types that behave the same on SQLite and PostgreSQL, and the backends' INSERT ... ON CONFLICT.

The PostgreSQL dialect (with its drivers: about 0.08 s of CPU to import) is imported only by a
PostgreSQL engine or when a statement is compiled for one, never by a command on SQLite."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SQLiteInsert

__all__ = ["JSONType", "UTCDateTime", "conflict_insert", "utcnow"]


class _JSON(TypeDecorator[Any]):
    """JSON, stored as ``jsonb`` on PostgreSQL (what ``JSON().with_variant(JSONB(), "postgresql")``
    declares, without importing the PostgreSQL dialect to build it)."""

    impl = JSON
    cache_ok = True
    hashable = False  # as JSON: a dict or list value
    should_evaluate_none = True  # as JSON(): None is stored as JSON null

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())


JSONType = _JSON()


def conflict_insert(dialect: str) -> Callable[[Any], PostgresInsert] | Callable[[Any], SQLiteInsert]:
    """The ``insert`` of the dialect named `dialect` (its statements have ``on_conflict_do_nothing`` and
    ``on_conflict_do_update``)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes: stored as ``timestamptz`` on PostgreSQL and as naive UTC
    on SQLite (which has no time zones), always returned aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column; use datetime.now(timezone.utc)")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
