"""Fixtures shared by every test package: databases of their own on the local PostgreSQL."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
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
# only, as before the defaults (tests/agents/stages/test_pipeline.py covers the defaults themselves).
os.environ.setdefault("ITEMSMITH_DEFAULT_JUDGES", "[]")
os.environ.setdefault("ITEMSMITH_DEFAULT_STUDENTS", "[]")
os.environ.setdefault("ITEMSMITH_REDERIVATION_ENABLED", "false")  # tests that re-derive turn it on themselves
# Judge validations of this test session only (none: every judge advisory), never the developer's own file;
# tests whose judges must decide record a validation for them (`validate_judges`).
os.environ.setdefault("ITEMSMITH_JUDGE_VALIDATIONS",
                      str(Path(tempfile.mkdtemp(prefix="itemsmith-judges-")) / "judge_validations.json"))
# Likewise the ladder validations (none recorded: a local ladder is judged by the built-in measurement).
os.environ.setdefault("ITEMSMITH_LADDER_VALIDATIONS",
                      str(Path(tempfile.mkdtemp(prefix="itemsmith-ladders-")) / "ladder_validations.json"))


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


@pytest.fixture
def validate_judge() -> Iterator[Callable[[str], None]]:
    """Record a judge spec as validated (AUC 0.9 on a corpus) for this test, as `itemsmith judges
    validate` would after measuring it: a scripted judge's scores then decide. Removed afterwards."""
    from datetime import UTC, datetime

    from itemsmith.agents.settings import get_settings
    from itemsmith.agents.stages.judge_validation import JudgeValidation, load_validations, record_validation

    recorded: list[str] = []

    def validate(spec: str) -> None:
        record_validation(JudgeValidation(judge=spec, auc=0.9, criteria={}, corpus="tests", corpus_hash="0" * 64,
                                          good=10, flawed=10, measured_at=datetime.now(UTC)), get_settings())
        recorded.append(spec)

    yield validate
    settings = get_settings()
    kept = {k: v for k, v in load_validations(settings).items() if k not in recorded}
    path = settings.judge_validations
    if path is not None and path.exists():
        path.unlink()
        for validation in kept.values():
            record_validation(validation, settings)
