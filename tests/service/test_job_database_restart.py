"""A job survives its database going away. A PostgreSQL restart under a running job (a private
server of this test, stopped and started again while the job writes progress) delays the job's
writes, which are retried, and the job finishes once; a job whose own statement is killed by the
server (``pg_terminate_backend``: the AdminShutdown-class error of a restart) goes back to the
queue instead of failing, and the sweep runs it to the end; a real authoring job (scripted
models) whose LangGraph checkpointer loses its connection in a restart is queued again by its
runner and resumes from its checkpoint, storing each template and verdict once.

Except in the authoring test, the job kind's function is replaced by one that waits on the test's
events (under the name of a real kind: job rows accept known kinds only), so the test decides when
the database goes away; every write it makes is the service's real one."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel
from sqlalchemy import Engine, text

from itemsmith.service.jobs import InProcessRunner, execute_job, get_job, list_events, submit_job, upgrade_database
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._kinds import JOB_KINDS, JobKindSpec
from itemsmith.service.jobs._store import create_job, requeue_stale_jobs
from itemsmith.service.jobs._transient import is_transient, retry_transient
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    get_engine,
    list_verdicts,
    list_versions,
    open_session,
)

from ..support import wait_until
from .conftest import AUTHOR_TASK, AUTHOR_TITLES, write_author_scripts

KIND = "calibrate"


class _NoRequest(BaseModel):
    pass


class _Logged(logging.Handler):
    """Sets `seen` once a record containing `text` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.WARNING)
        self.text, self.seen = text, threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


@pytest.fixture
def retries_logged() -> Iterator[_Logged]:
    handler = _Logged("transient database error")
    logger = logging.getLogger("itemsmith.jobs")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def _job(engine: Engine, kind: str) -> str:
    with open_session(engine) as session:
        return create_job(session, kind=kind, owner="alice", request={}, bank_id=None).id


@pytest.mark.slow
def test_a_postgresql_restart_mid_job_delays_its_progress_writes_and_it_finishes_once(
        private_postgres, retries_logged: _Logged, monkeypatch: pytest.MonkeyPatch) -> None:
    upgrade_database(private_postgres.url)
    engine = get_engine(private_postgres.url)
    steps = [threading.Event() for _ in range(3)]
    written = [threading.Event() for _ in range(3)]

    def run(request: _NoRequest, context: JobContext) -> dict[str, Any]:
        for step, go in enumerate(steps):
            assert go.wait(60)
            context.publish("progress", {"step": step}, progress={"step": step})
            written[step].set()
        return {"steps": len(steps)}

    monkeypatch.setitem(JOB_KINDS._entries, KIND, JobKindSpec(KIND, _NoRequest, run))  # stands in for the kind
    job_id = _job(engine, KIND)
    settings = ServiceSettings(database_url=private_postgres.url, job_db_retry_s=120, job_lease_s=120)
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(execute_job(engine, job_id, worker="w1",
                                                                        settings=settings)))
    worker.start()
    steps[0].set()
    assert written[0].wait(60)
    private_postgres.stop()  # the server goes away between two progress writes ...
    steps[1].set()
    assert retries_logged.seen.wait(60)  # ... the next one fails and is retried ...
    assert not written[1].is_set()
    private_postgres.start()  # ... until the server is back
    assert written[1].wait(60)
    steps[2].set()
    worker.join(120)
    assert outcome == ["succeeded"]
    with open_session(engine) as session:
        job = get_job(session, job_id)
        events = list_events(session, job_id)
    assert job.status == "succeeded" and job.attempts == 1 and job.result == {"steps": 3}
    assert [e.payload["step"] for e in events if e.kind == "progress"] == [0, 1, 2]  # each write once
    assert [e.payload["status"] for e in events if e.kind == "status"] == ["queued", "running", "succeeded"]
    engine.dispose()


def test_a_job_whose_statement_the_server_kills_is_queued_again_and_the_sweep_finishes_it(
        postgres_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    upgrade_database(postgres_database)
    engine = get_engine(postgres_database)
    runs: list[int] = []

    def run(request: _NoRequest, context: JobContext) -> dict[str, Any]:
        runs.append(context.claim.attempt)
        if len(runs) == 1:
            with open_session(engine) as session:
                session.execute(text("SELECT pg_sleep(60) /* itemsmith-test-killed */"))
        return {"runs": len(runs)}

    monkeypatch.setitem(JOB_KINDS._entries, KIND, JobKindSpec(KIND, _NoRequest, run))  # stands in for the kind
    try:
        job_id = _job(engine, KIND)
        settings = ServiceSettings(database_url=postgres_database)
        outcome: list[object] = []
        worker = threading.Thread(target=lambda: outcome.append(execute_job(engine, job_id, worker="w1",
                                                                            settings=settings)))
        worker.start()
        with engine.connect() as admin:
            def terminated() -> bool:
                killed = admin.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND query LIKE '%itemsmith-test-killed%' AND query NOT LIKE '%pg_stat_activity%'")).first()
                admin.commit()
                return killed is not None

            wait_until(terminated, "the job's statement to start (and be terminated)", 60, interval_s=0.05)
        worker.join(60)
        assert outcome == ["queued"]  # not failed
        with open_session(engine) as session:
            assert get_job(session, job_id).status == "queued"
        assert requeue_stale_jobs(engine, queued_for_s=0) == [job_id]  # what the sweeper does
        assert execute_job(engine, job_id, worker="w2", settings=settings) == "succeeded"
        with open_session(engine) as session:
            job = get_job(session, job_id)
            statuses = [e.payload["status"] for e in list_events(session, job_id) if e.kind == "status"]
        assert job.result == {"runs": 2} and job.attempts == 2 and runs == [1, 2]
        assert statuses == ["queued", "running", "queued", "running", "succeeded"]
    finally:
        engine.dispose()


def test_only_transient_errors_are_retried_and_only_within_the_time_given() -> None:
    from sqlalchemy.exc import IntegrityError, OperationalError

    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
        return "done"

    assert retry_transient(flaky, within_s=30, what="test", first_wait_s=0.01) == "done" and len(calls) == 3
    integrity = IntegrityError("INSERT", {}, Exception("duplicate key"))
    assert not is_transient(integrity) and not is_transient(ValueError("x"))
    with pytest.raises(IntegrityError):  # a real error is raised at once
        retry_transient(lambda: (_ for _ in ()).throw(integrity), within_s=30, what="test")
    started = time.monotonic()
    with pytest.raises(OperationalError):  # a database that stays away: given up after within_s
        retry_transient(lambda: (_ for _ in ()).throw(OperationalError("SELECT 1", {}, Exception("refused"))),
                        within_s=0.3, what="test", first_wait_s=0.05)
    assert time.monotonic() - started < 5


def test_the_waits_double_up_to_their_bound_and_the_last_ends_at_the_time_given(caplog) -> None:
    from sqlalchemy.exc import OperationalError

    def away() -> None:
        raise OperationalError("SELECT 1", {}, Exception("refused"))

    with caplog.at_level(logging.WARNING, logger="itemsmith.jobs"), pytest.raises(OperationalError):
        retry_transient(away, within_s=1.0, what="test", first_wait_s=0.02, max_wait_s=0.08)
    waits = [record.args[-1] for record in caplog.records if "transient database error" in record.getMessage()]
    assert waits[:3] == pytest.approx([0.02, 0.04, 0.08]) and max(waits) == pytest.approx(0.08)
    assert sum(waits) <= 1.0 and len(waits) >= 4


def test_raw_psycopg_errors_of_a_restart_are_transient_and_real_errors_are_not() -> None:
    """What LangGraph's checkpointer raises (psycopg, no SQLAlchemy around it), also when another
    error was raised from it or while handling it, or when it sits in an exception group."""
    from sqlalchemy.exc import IntegrityError

    restart = [psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"),
               psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
               psycopg.OperationalError("connection failed: FATAL:  the database system is shutting down")]
    for error in restart:
        assert is_transient(error)
        try:
            try:
                raise error
            except psycopg.Error as inner:
                raise RuntimeError("the slot's checkpoint write failed") from inner
        except RuntimeError as outer:
            assert is_transient(outer)
        assert is_transient(ExceptionGroup("slots", [ValueError("x"), error]))
    for error in (psycopg.errors.UndefinedTable("relation does not exist"), psycopg.errors.UniqueViolation("dup"),
                  IntegrityError("INSERT", {}, Exception("duplicate key")), ValueError("a bug"),
                  ExceptionGroup("slots", [ValueError("x"), KeyError("y")])):
        assert not is_transient(error)


def _polled(read: Callable[[], Any], until: Callable[[Any], bool], what: str, timeout_s: float = 300.0) -> Any:
    """`read()` until `until` holds on its value (a read while the server is away is read again)."""
    def holds() -> Any:
        try:
            value = read()
        except Exception:  # noqa: BLE001 - the server is restarting
            return None
        return (value,) if until(value) else None  # a tuple: true even when the value itself is not

    return wait_until(holds, what, timeout_s, interval_s=0.1)[0]


@pytest.mark.slow
def test_a_postgresql_restart_mid_authoring_requeues_the_job_and_it_resumes_storing_once(
        private_postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_API_MODEL_PROVIDERS", '["scripted"]')
    monkeypatch.setenv("ITEMSMITH_SCRIPTED_DIR", str(tmp_path))
    upgrade_database(private_postgres.url)  # bank tables and the jobs' checkpoint tables
    engine = get_engine(private_postgres.url)
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="restart", handler="synthetic", owner="alice"))
    request = {"bank_id": bank.id, "handler": "synthetic", "task": AUTHOR_TASK,
               "templates": len(AUTHOR_TITLES), **write_author_scripts(tmp_path, latency_s=1.0), "slots": 1,
               "sandbox_workers": 1, "num_samples": 3}
    settings = ServiceSettings(database_url=private_postgres.url, uploads_dir=tmp_path / "uploads", job_lease_s=60,
                               job_db_retry_s=120)
    runner = InProcessRunner(engine, settings, max_jobs=1)  # not started: no sweep, the runner alone re-dispatches
    try:
        job = submit_job(engine, kind="author", owner="alice", request=request, bank_id=bank.id, runner=runner)

        def read() -> Any:
            with open_session(engine) as session:
                return get_job(session, job.id)

        under_way = _polled(read, lambda j: j.status == "running" and j.progress.get("slots"), "the slots to start")
        assert under_way.progress.get("stored", 0) == 0
        private_postgres.stop()  # every session, the checkpointer's included, is terminated
        private_postgres.start()
        finished = _polled(read, lambda j: j.status not in ("queued", "running"), "the job to end")
    finally:
        runner.stop()
    assert finished.status == "succeeded", finished.error
    assert finished.attempts == 2 and finished.progress["accepted"] == 3
    with open_session(engine) as session:
        events = list_events(session, job.id)
        versions = list_versions(session, bank.id)
        stages = [sorted(x.stage for x in list_verdicts(session, v.id)) for v in versions]
    statuses = [e.payload for e in events if e.kind == "status"]
    requeued = [s["reason"] for s in statuses if s["status"] == "queued" and "reason" in s]
    assert requeued in (["database error: OperationalError"], ["database error: AdminShutdown"]), requeued
    assert [s["status"] for s in statuses].count("succeeded") == 1
    assert sorted(v.source for v in versions) == sorted(get_curated(key).source for key in AUTHOR_TITLES.values())
    assert stages == [["audit", "decision", "structure"]] * 3  # each template's verdicts once
    assert sum(e.kind == "template" for e in events) == 3  # each template stored once
    engine.dispose()
