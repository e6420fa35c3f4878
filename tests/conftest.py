"""Fixtures shared by every test package: databases of their own on the local PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine

from itemsmith.templates_bank.storage import get_engine, upgrade

POSTGRES_ADMIN_URL = os.environ.get("ITEMSMITH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
# Diversity summaries (author job results, imports, the review page) measure text similarity only
# in tests: loading the sentence embedder takes tens of seconds; tests of embeddings pass their own.
os.environ.setdefault("ITEMSMITH_DIVERSITY_EMBEDDER", "off")
# No default judges or students: a test that names none runs the structure check and the item audit
# only, as before the defaults (tests/agents/test_pipeline.py covers the defaults themselves).
os.environ.setdefault("ITEMSMITH_DEFAULT_JUDGES", "[]")
os.environ.setdefault("ITEMSMITH_DEFAULT_STUDENTS", "[]")
os.environ.setdefault("ITEMSMITH_REDERIVATION_ENABLED", "false")  # tests that re-derive turn it on themselves


@contextmanager
def _fresh_postgres_database() -> Iterator[str]:
    """A new, empty database, dropped at the end even on failure. Skips the test when no server
    answers, except under CI, where a missing server fails the tests that need it."""
    psycopg = pytest.importorskip("psycopg")
    from sqlalchemy.engine import make_url

    admin = make_url(POSTGRES_ADMIN_URL)
    conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        connection = psycopg.connect(conninfo, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {POSTGRES_ADMIN_URL} is required under CI: {exc}")
        pytest.skip(f"no PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")
    name = f"itemsmith_test_{uuid.uuid4().hex[:12]}"
    with connection:
        connection.execute(f'CREATE DATABASE "{name}"')
        url = admin.set(database=name).render_as_string(hide_password=False)
        try:
            yield url
        finally:
            get_engine(url).dispose()
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL database shared by the test session; each test that uses it leaves it empty."""
    with _fresh_postgres_database() as url:
        yield url


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A PostgreSQL database of this test alone (for tests that leave tables behind, such as
    LangGraph's checkpoint tables)."""
    with _fresh_postgres_database() as url:
        yield url


# A migrated SQLite bank in tmp_path, for the CLI and API tests (`engine` migrates it).
@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bank.sqlite'}"


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    upgrade(database_url)
    engine = get_engine(database_url)
    yield engine
    engine.dispose()
