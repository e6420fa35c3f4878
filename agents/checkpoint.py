"""Checkpointers for the authoring graphs: SQLite by default, PostgreSQL when configured.

``None`` or a path (or ``sqlite:///path``) gives an `AsyncSqliteSaver` on that file;
``postgresql://...`` an `AsyncPostgresSaver` (extra ``postgres``); ``memory`` an in-process
saver (tests).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from itemsmith.agents.errors import ProviderConfigError


@asynccontextmanager
async def open_checkpointer(url: str | None, *, default_path: Path) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for `url` (see the module docstring), closed on exit."""
    if url == "memory":
        from langgraph.checkpoint.memory import InMemorySaver  # noqa: PLC0415

        yield InMemorySaver()
        return
    if url and url.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver  # noqa: PLC0415
        except ImportError:
            raise ProviderConfigError("PostgreSQL checkpoints need: pip install 'itemsmith[postgres]'") from None
        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: PLC0415

    path = Path(url.removeprefix("sqlite:///")) if url else default_path
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
