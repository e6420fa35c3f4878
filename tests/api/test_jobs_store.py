"""The job store on SQLite and PostgreSQL: atomic claims, leases, fenced writes, cancel, resume,
the sweep for jobs whose worker died, events."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, update

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import JobStateError, cancel_job, get_job, list_events, list_jobs
from itemsmith.service.jobs._context import Heartbeat, JobContext
from itemsmith.service.jobs._store import (
    LeaseLost,
    claim_job,
    create_job,
    finish_job,
    release_job,
    renew_lease,
    requeue_job,
    requeue_stale_jobs,
)
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import NotFoundError, get_engine, open_session, utcnow

from ..support import wait_until


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Engine:
    """A migrated bank database on each backend."""
    if request.param == "sqlite":
        return request.getfixturevalue("engine")
    return get_engine(request.getfixturevalue("migrated_postgres_url"))


def _lease_until(engine: Engine, job_id: str) -> datetime | None:
    with open_session(engine) as session:
        return session.get(JobRow, job_id).lease_until


def _new(engine: Engine, owner: str = "alice") -> str:
    with open_session(engine) as session:
        return create_job(session, kind="author", owner=owner, request={"x": 1}, bank_id=None).id


def _expire(engine: Engine, job_id: str) -> None:
    with open_session(engine) as session:
        session.execute(update(JobRow).where(JobRow.id == job_id).values(lease_until=utcnow() - timedelta(seconds=1)))


def _job(engine: Engine, job_id: str):
    with open_session(engine) as session:
        return get_job(session, job_id)


def test_claim_is_exclusive_until_the_lease_expires(store: Engine) -> None:
    job_id = _new(store)
    first = claim_job(store, job_id, worker="w1", lease_s=60)
    assert first is not None and first.attempt == 1 and first.request == {"x": 1}
    assert claim_job(store, job_id, worker="w2", lease_s=60) is None
    job = _job(store, job_id)
    assert job.status == "running" and job.attempts == 1

    _expire(store, job_id)  # w1 died: its lease ran out
    second = claim_job(store, job_id, worker="w2", lease_s=60)
    assert second is not None and second.attempt == 2
    # the dead worker's claim fences nothing any more
    with pytest.raises(LeaseLost):
        renew_lease(store, first, 60)
    with pytest.raises(LeaseLost):
        finish_job(store, first, "succeeded", result={"from": "w1"})
    finish_job(store, second, "succeeded", result={"from": "w2"})
    job = _job(store, job_id)
    assert (job.status, job.result, job.attempts) == ("succeeded", {"from": "w2"}, 2)
    assert claim_job(store, job_id, worker="w3", lease_s=60) is None  # final jobs are never claimed
    # the history says why attempt 2 began, whether the sweep or the next claim noticed the dead worker
    with open_session(store) as session:
        statuses = [e.payload for e in list_events(session, job_id) if e.kind == "status"]
    assert statuses[:3] == [{"status": "queued"}, {"status": "running", "attempt": 1},
                            {"status": "queued", "reason": "its worker stopped"}]
    assert statuses[3] == {"status": "running", "attempt": 2}


def test_concurrent_claims_let_exactly_one_worker_run_the_job(store: Engine) -> None:
    job_id = _new(store)
    barrier = threading.Barrier(6)
    claims = []

    def claim(worker: str) -> None:
        barrier.wait()
        claims.append(claim_job(store, job_id, worker=worker, lease_s=60))

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [c for c in claims if c is not None]
    assert len(claims) == 6 and len(won) == 1
    assert _job(store, job_id).attempts == 1


def test_renewal_extends_the_lease_and_reports_a_cancel(store: Engine) -> None:
    job_id = _new(store)
    claim = claim_job(store, job_id, worker="w1", lease_s=1)
    assert claim is not None
    with open_session(store) as session:
        before = session.get(JobRow, job_id).lease_until
    assert renew_lease(store, claim, 60) is False
    with open_session(store) as session:
        assert session.get(JobRow, job_id).lease_until > before + timedelta(seconds=30)
        cancelled = cancel_job(session, job_id, "alice")
    assert cancelled.status == "running" and cancelled.cancel_requested
    assert renew_lease(store, claim, 60) is True


def test_heartbeat_keeps_a_short_lease_alive_and_interrupts_on_cancel(store: Engine) -> None:
    job_id = _new(store)
    settings = ApiSettings(job_lease_s=0.6)
    claim = claim_job(store, job_id, worker="w1", lease_s=settings.job_lease_s)
    assert claim is not None
    context = JobContext(store, claim, settings)
    first_lease = _lease_until(store, job_id)
    with Heartbeat(context, interval_s=0.1):
        # the first lease has run out, and the heartbeat has renewed it since
        wait_until(lambda: utcnow() > first_lease and _lease_until(store, job_id) > utcnow(),
                   "the first lease to expire under a renewed one")
        assert claim_job(store, job_id, worker="w2", lease_s=60) is None
        assert context.interruption is None
        with open_session(store) as session:
            cancel_job(session, job_id, "alice")
        wait_until(lambda: context.interruption is not None, "the heartbeat to see the cancellation", timeout_s=5)
    assert context.interruption == "cancel"


def test_cancel_and_resume_follow_the_job_state(store: Engine) -> None:
    queued = _new(store)
    with open_session(store) as session:
        assert cancel_job(session, queued, "alice").status == "cancelled"  # a queued job stops at once
        with pytest.raises(JobStateError, match="already cancelled"):
            cancel_job(session, queued, "alice")
        resumed = requeue_job(session, queued, "alice")
    assert (resumed.status, resumed.cancel_requested) == ("queued", False)

    claim = claim_job(store, queued, worker="w1", lease_s=60)
    assert claim is not None
    with open_session(store) as session:
        with pytest.raises(JobStateError, match="only failed or cancelled"):
            requeue_job(session, queued, "alice")
    finish_job(store, claim, "failed", error="boom")
    with open_session(store) as session:
        assert requeue_job(session, queued, "alice").status == "queued"
        assert get_job(session, queued).error is None


def test_foreign_and_unknown_jobs_are_not_found(store: Engine) -> None:
    job_id = _new(store, owner="alice")
    _new(store, owner="bob")
    with open_session(store) as session:
        for call in (lambda: get_job(session, job_id, "bob"), lambda: cancel_job(session, job_id, "bob"),
                     lambda: requeue_job(session, job_id, "bob"), lambda: get_job(session, "f" * 32, "alice")):
            with pytest.raises(NotFoundError, match="no job with id"):
                call()
        assert [j.id for j in list_jobs(session, "alice")] == [job_id]


def test_sweep_requeues_jobs_whose_worker_died_once(store: Engine) -> None:
    dead, alive, waiting = _new(store), _new(store), _new(store)
    dead_claim = claim_job(store, dead, worker="w1", lease_s=60)
    assert dead_claim is not None and claim_job(store, alive, worker="w2", lease_s=60) is not None
    _expire(store, dead)
    assert requeue_stale_jobs(store, queued_for_s=3600) == [dead]  # `waiting` was queued just now
    assert requeue_stale_jobs(store, queued_for_s=3600) == []
    assert _job(store, dead).status == "queued" and _job(store, alive).status == "running"
    with pytest.raises(LeaseLost):
        renew_lease(store, dead_claim, 60)
    # a job left queued longer than the grace period is dispatched again (once per period)
    assert sorted(requeue_stale_jobs(store, queued_for_s=0)) == sorted([dead, waiting])
    assert requeue_stale_jobs(store, queued_for_s=60) == []


def test_events_are_numbered_from_one_per_job(store: Engine) -> None:
    job_id, other = _new(store), _new(store)
    claim = claim_job(store, job_id, worker="w1", lease_s=60)
    assert claim is not None
    release_job(store, claim, "the worker stopped")
    with open_session(store) as session:
        events = list_events(session, job_id)
        assert [(e.seq, e.kind, e.payload.get("status")) for e in events] == [
            (1, "status", "queued"), (2, "status", "running"), (3, "status", "queued")]
        assert [e.seq for e in list_events(session, job_id, after=1)] == [2, 3]
        assert [e.seq for e in list_events(session, other)] == [1]
    assert _job(store, job_id).status == "queued"
