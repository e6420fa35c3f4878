"""Checkpointers for the authoring graphs: SQLite by default, PostgreSQL when configured.

``None`` or a path (or ``sqlite:///path``) gives an `AsyncSqliteSaver` on that file;
``postgresql://...`` an `AsyncPostgresSaver` (extra ``postgres``); ``memory`` an in-process
saver (tests).

`setup_checkpointer` creates the checkpoint tables (``itemsmith db upgrade`` calls it for the
service's database). A run opened with ``setup=False`` never runs LangGraph's migrations itself:
on PostgreSQL they include ``CREATE INDEX CONCURRENTLY``, which waits for every open transaction
of the database and so must not run inside a job of a busy server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from itemsmith.agents.errors import ProviderConfigError


def _is_postgres(url: str | None) -> bool:
    return bool(url) and url.startswith(("postgres://", "postgresql://"))  # type: ignore[union-attr]


def _sqlite_path(url: str | None, default_path: Path) -> Path:
    return Path(url.removeprefix("sqlite:///")) if url else default_path


def setup_checkpointer(url: str | None, *, default_path: Path) -> None:
    """Create or migrate the checkpoint tables of `url` (nothing to do for ``memory``)."""
    if url == "memory":
        return
    if _is_postgres(url):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError:
            raise ProviderConfigError("PostgreSQL checkpoints need: pip install 'itemsmith[postgres]'") from None
        with PostgresSaver.from_conn_string(url) as saver:  # type: ignore[arg-type]
            saver.setup()
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = _sqlite_path(url, default_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()


async def _require_postgres_tables(saver: BaseCheckpointSaver) -> None:
    async with saver.conn.cursor() as cursor:  # type: ignore[attr-defined]
        await cursor.execute("SELECT to_regclass('checkpoint_migrations') AS t")
        row = await cursor.fetchone()
    if row is None or row["t"] is None:
        raise ProviderConfigError("the checkpoint tables are missing: run `itemsmith db upgrade`")


@asynccontextmanager
async def open_checkpointer(url: str | None, *, default_path: Path,
                            setup: bool = True) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for `url` (see the module docstring), closed on exit. With
    ``setup=False`` the PostgreSQL tables must exist already (`setup_checkpointer`)."""
    if url == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if _is_postgres(url):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise ProviderConfigError("PostgreSQL checkpoints need: pip install 'itemsmith[postgres]'") from None
        async with AsyncPostgresSaver.from_conn_string(url) as saver:  # type: ignore[arg-type]
            await (saver.setup() if setup else _require_postgres_tables(saver))
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = _sqlite_path(url, default_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
