"""Server-sent event streams against a real uvicorn server on PostgreSQL: a stream holds no
pooled connection between polls (more streams than the pool, other routes still answer), and a
job followed on a fresh database completes (its checkpoint tables come from `db upgrade`; the
job never runs LangGraph's setup, whose ``CREATE INDEX CONCURRENTLY`` waits on open transactions)."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, text

from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.service.auth import create_key
from itemsmith.service.jobs import InProcessRunner, execute_job, get_job, submit_job, upgrade_database
from itemsmith.service.jobs._store import create_job
from itemsmith.templates_bank.storage import BankCreate, create_bank, get_engine, open_session, upgrade

from ..support import serve_app
from .conftest import OWNER, AuthorScripts, RecordingRunner

POOL_SIZE = 2


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of 2 connections, no overflow, and a 3 s wait for a connection (a held connection
    would turn the next request into a 500 after 3 s)."""
    monkeypatch.setenv("ITEMSMITH_POOL_SIZE", str(POOL_SIZE))
    monkeypatch.setenv("ITEMSMITH_MAX_OVERFLOW", "0")
    monkeypatch.setenv("ITEMSMITH_POOL_TIMEOUT_S", "3")


def _key(engine: Engine) -> str:
    with open_session(engine) as session:
        return create_key(session, OWNER, name="test")[0]


def _first_event(client: httpx.Client, url: str, headers: dict[str, str], opened: list[httpx.Response],
                 ready: threading.Semaphore) -> None:
    request = client.build_request("GET", url, headers=headers)
    response = client.send(request, stream=True)
    opened.append(response)
    for line in response.iter_lines():
        if line.startswith("event: "):  # the job's first event arrived: the stream is live
            ready.release()
            return


def test_more_streams_than_the_pool_leave_other_routes_answering(
        postgres_database: str, small_pool: None, tmp_path: Path) -> None:
    upgrade_database(postgres_database)
    engine = get_engine(postgres_database)
    assert engine.pool.size() == POOL_SIZE
    settings = ApiSettings(database_url=postgres_database, uploads_dir=tmp_path / "uploads")
    app = create_app(settings)
    app.state.job_runner = RecordingRunner()  # the job stays queued: every stream stays open
    key = _key(engine)
    with open_session(engine) as session:
        job_id = create_job(session, kind="author", owner=OWNER, request={}, bank_id=None).id
    streams = POOL_SIZE * 3
    with serve_app(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        opened: list[httpx.Response] = []
        ready = threading.Semaphore(0)
        headers = {"X-API-Key": key, "Accept": "text/event-stream"}
        threads = [threading.Thread(target=_first_event, daemon=True,
                                    args=(client, f"/jobs/{job_id}/events", headers, opened, ready))
                   for _ in range(streams)]
        for thread in threads:
            thread.start()
        for _ in range(streams):
            assert ready.acquire(timeout=30), "a stream never delivered its first event"
        try:
            # every stream is open and polling; other routes still get a connection at once
            for _ in range(POOL_SIZE * 2):
                assert client.get("/banks", headers={"X-API-Key": key}).status_code == 200
                assert client.get(f"/jobs/{job_id}", headers={"X-API-Key": key}).json()["status"] == "queued"
            assert engine.pool.checkedout() <= 1  # between polls the streams hold nothing
        finally:
            for response in opened:
                response.close()


@pytest.mark.slow
def test_a_followed_job_on_a_fresh_postgres_database_completes(
        postgres_database: str, small_pool: None, tmp_path: Path, author_scripts) -> None:
    upgrade_database(postgres_database)
    engine = get_engine(postgres_database)
    with engine.connect() as connection:  # `db upgrade` made LangGraph's tables
        tables = set(connection.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")))
    assert {"checkpoints", "checkpoint_writes", "checkpoint_blobs", "checkpoint_migrations"} <= tables
    settings = ApiSettings(database_url=postgres_database, uploads_dir=tmp_path / "uploads")
    app = create_app(settings)
    app.state.job_runner = InProcessRunner(engine, settings)
    key = _key(engine)
    scripts: AuthorScripts = author_scripts(("First",))
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="followed", handler="synthetic", owner=OWNER))
    with serve_app(app) as base, httpx.Client(base_url=base, timeout=120) as client:
        job = submit_job(engine, kind="author", owner=OWNER, request=scripts.request(bank.id), bank_id=bank.id,
                         runner=app.state.job_runner)
        with client.stream("GET", f"/jobs/{job.id}/events",
                           headers={"X-API-Key": key, "Accept": "text/event-stream"}) as response:
            body = "".join(response.iter_text())
        final = client.get(f"/jobs/{job.id}", headers={"X-API-Key": key}).json()
    assert '"status":"succeeded"' in body.replace(" ", "")
    assert final["status"] == "succeeded", final["error"]


@pytest.mark.slow
def test_a_job_does_not_create_the_checkpoint_tables_itself(
        postgres_database: str, tmp_path: Path, author_scripts) -> None:
    """Migrated without the checkpoint tables (the bank's migrations only): the job fails with a
    message naming `itemsmith db upgrade` instead of running LangGraph's setup."""
    upgrade(postgres_database)
    engine = get_engine(postgres_database)
    settings = ApiSettings(database_url=postgres_database, uploads_dir=tmp_path / "uploads")
    scripts: AuthorScripts = author_scripts(("First",))
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="unprepared", handler="synthetic", owner=OWNER))
        job_id = create_job(session, kind="author", owner=OWNER, request=scripts.request(bank.id), bank_id=bank.id).id
    assert execute_job(engine, job_id, worker="test", settings=settings) == "failed"
    with open_session(engine) as session, engine.connect() as connection:
        failed = get_job(session, job_id)
        exists = connection.scalar(text("SELECT to_regclass('checkpoint_migrations')"))
    assert "itemsmith db upgrade" in (failed.error or "")
    assert exists is None


def test_the_db_upgrade_command_creates_the_checkpoint_tables(postgres_database: str) -> None:
    """``itemsmith db upgrade`` (the command an operator runs) sets up LangGraph's tables too."""
    import shutil
    import subprocess

    command = shutil.which("itemsmith")
    assert command is not None
    done = subprocess.run([command, "db", "upgrade", "--db", postgres_database], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    with get_engine(postgres_database).connect() as connection:
        migrated = connection.scalar(text("SELECT count(*) FROM checkpoint_migrations"))
    assert migrated and migrated > 0
