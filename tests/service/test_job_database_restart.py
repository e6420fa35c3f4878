"""Issue 26.3: a job survives its database going away. A PostgreSQL restart under a running job
(a private server of this test, stopped and started again while the job writes progress) delays
the job's writes, which are retried, and the job finishes once; a job whose own statement is
killed by the server (``pg_terminate_backend``: the AdminShutdown-class error of a restart) goes
back to the queue instead of failing, and the sweep runs it to the end.

The job kind's function is replaced here by one that waits on the test's events (under the name of
a real kind: job rows accept known kinds only), so the test decides when the database goes away;
every write it makes is the service's real one."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine, text

from itemsmith.service.jobs import execute_job, get_job, list_events, upgrade_database
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._kinds import JOB_KINDS, JobKindSpec
from itemsmith.service.jobs._store import create_job, requeue_stale_jobs
from itemsmith.service.jobs._transient import is_transient, retry_transient
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.storage import get_engine, open_session

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
            deadline = time.monotonic() + 60
            while not admin.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND query LIKE '%itemsmith-test-killed%' AND query NOT LIKE '%pg_stat_activity%'")).first():
                assert time.monotonic() < deadline, "the job's statement never started"
                admin.commit()
                time.sleep(0.05)
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
