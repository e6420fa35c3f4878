"""Fixtures of the CLI tests: a SQLite bank in tmp_path (migrated by `engine`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from itemsmith.templates_bank.storage import get_engine, upgrade


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bank.sqlite'}"


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    upgrade(database_url)
    engine = get_engine(database_url)
    yield engine
    engine.dispose()
