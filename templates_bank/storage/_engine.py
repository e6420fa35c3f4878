"""Engines, sessions and schema migrations (Alembic, run in code from the installed package).

Alembic is imported only to migrate: the revision checks every command makes read the version
table with a plain query and the shipped revisions from the migration files' ``revision`` and
``down_revision`` lines (`tests/templates_bank/test_storage.py` checks them against Alembic's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url

from itemsmith.templates_bank.settings import BankSettings
from itemsmith.templates_bank.storage._errors import StorageError
from itemsmith.templates_bank.storage._models import BankSession

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["MIGRATIONS_DIR", "VERSION_TABLE", "current_revision", "downgrade", "get_engine", "head_revision",
           "is_known_revision", "normalize_url", "open_session", "require_current_schema", "upgrade"]

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
VERSION_TABLE = "itemsmith_alembic_version"  # not alembic_version: the database may be shared


def normalize_url(url: str | URL | None = None) -> URL:
    """The configured URL (`BankSettings`) when none is given; ``postgresql://`` uses psycopg 3."""
    parsed = make_url(url if url is not None else BankSettings().url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_setup(busy_timeout_s: float, in_memory: bool) -> Callable[[Any, Any], None]:
    """What every SQLite connection is set to: foreign keys enforced; a write that finds another one
    in progress waits up to `busy_timeout_s` for it (not pysqlite's 5 s) before "database is
    locked"; and, for a file, write-ahead logging, so that readers and the one writer never wait for
    each other (a job's long read no longer holds up another job's commit)."""

    def setup(dbapi_connection: Any, _record: Any) -> None:  # DB-API objects
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    return setup


@cache
def _engine(url: URL) -> Engine:
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    settings = BankSettings()
    in_memory = url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")
    # pre-ping: a connection the server dropped while it sat in the pool (a restart) is replaced
    # at checkout instead of failing the first statement on it
    pool = {} if in_memory else {"pool_size": settings.pool_size, "max_overflow": settings.max_overflow,
                                 "pool_timeout": settings.pool_timeout_s, "pool_pre_ping": True}
    engine = create_engine(url, **pool)  # an in-memory SQLite database is one connection per thread
    if url.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_setup(settings.sqlite_busy_timeout_s, in_memory))
    return engine


def get_engine(url: str | URL | None = None) -> Engine:
    """One shared engine per database URL; its pool is sized by `BankSettings` (``ITEMSMITH_POOL_SIZE``,
    ``ITEMSMITH_MAX_OVERFLOW``, ``ITEMSMITH_POOL_TIMEOUT_S``), read when the engine is first made."""
    return _engine(normalize_url(url))


@contextmanager
def open_session(url: str | URL | Engine | None = None) -> Iterator[BankSession]:
    """A session in a transaction: committed when the block ends, rolled back if it raises."""
    engine = url if isinstance(url, Engine) else get_engine(url)
    with BankSession(engine, expire_on_commit=False) as session, session.begin():
        yield session


def _alembic_config(connection) -> Config:  # sqlalchemy Connection
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(url: str | URL | Engine | None = None, revision: str = "head") -> None:
    """Migrate the database up to ``revision`` (creating the schema on an empty database)."""
    from alembic import command

    engine = url if isinstance(url, Engine) else get_engine(url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), revision)


def downgrade(url: str | URL | Engine | None = None, revision: str = "base") -> None:
    """Migrate the database down to ``revision`` (``base`` drops every table of the bank)."""
    from alembic import command

    engine = url if isinstance(url, Engine) else get_engine(url)
    with engine.begin() as connection:
        command.downgrade(_alembic_config(connection), revision)


def current_revision(url: str | URL | Engine | None = None) -> str | None:
    """The database's migration revision; None before the first upgrade."""
    engine = url if isinstance(url, Engine) else get_engine(url)
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return None
        return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


_REVISION_LINE = re.compile(r'^(down_revision|revision)\b[^=\n]*=\s*(?:"([^"]*)"|None)\s*$', re.MULTILINE)


@cache
def _revisions() -> dict[str, str | None]:
    """Each migration this itemsmith ships -> the one it revises (None: the first)."""
    revisions: dict[str, str | None] = {}
    for script in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        lines = dict(_REVISION_LINE.findall(script.read_text(encoding="utf-8")))
        if "revision" in lines:
            revisions[lines["revision"]] = lines.get("down_revision") or None
    return revisions


def head_revision() -> str:
    """The newest migration this itemsmith ships (the one no other revises)."""
    revised = set(_revisions().values())
    heads = [revision for revision in _revisions() if revision not in revised]
    assert len(heads) == 1, heads
    return heads[0]


def is_known_revision(revision: str) -> bool:
    """Whether `revision` is one of this itemsmith's migrations (else a newer itemsmith wrote it)."""
    return revision in _revisions()


def require_current_schema(url: str | URL | Engine | None = None) -> None:
    """Raise `StorageError` unless the database is migrated to the newest revision."""
    current, head = current_revision(url), head_revision()
    if current != head:
        engine = url if isinstance(url, Engine) else get_engine(url)
        where = engine.url.render_as_string(hide_password=True)
        raise StorageError(f"the bank database {where} is at revision {current or '(empty)'}, this itemsmith needs "
                           f"{head}: run `itemsmith db upgrade`")
