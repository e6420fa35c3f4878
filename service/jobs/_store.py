"""Jobs in the bank database: create, claim, renew, finish, cancel, resume; their events.

A worker runs a job only while it holds the job's lease. `claim_job` takes it in one UPDATE
(``status='queued'``, or ``'running'`` with an expired lease), so two workers never run one job,
and counts the attempt. Every later write of the worker (events, progress, lease renewal, the
outcome) is fenced by the claim (same worker, same attempt, still running): a worker that lost
its lease, because it stalled longer than the lease and another worker took the job over, can
no longer change the job (`LeaseLost`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Engine, and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from itemsmith.service.jobs._schemas import FINAL_STATUSES, JobEventPublic, JobPublic, JobStatus
from itemsmith.service.tables import JobEventRow, JobRow
from itemsmith.templates_bank.storage import NotFoundError, StorageError, open_session, utcnow

__all__ = [
    "Claim", "JobStateError", "LeaseLost", "append_event", "cancel_job", "claim_job", "create_job",
    "fenced_session", "finish_job", "get_job", "jobs_on_bank", "latest_request", "list_events", "list_jobs", "release_job", "renew_lease",
    "requeue_job", "requeue_stale_jobs",
]

_EVENT_INSERT_TRIES = 5


class JobStateError(StorageError):
    """The job is not in a state that allows this (e.g. resuming a job that succeeded)."""


class LeaseLost(RuntimeError):
    """This worker's claim on the job is gone: another worker took it over, or it ended."""


@dataclass(frozen=True)
class Claim:
    """A worker's hold on a job: fences every write of this run of the job."""

    job_id: str
    worker: str
    attempt: int
    kind: str
    owner: str
    bank_id: int | None
    request: dict[str, Any]
    cancel_requested: bool


def new_job_id() -> str:
    return secrets.token_hex(16)


def _public(row: JobRow) -> JobPublic:
    return JobPublic.model_validate(row)


def _next_seq(session: Session, job_id: str) -> int:
    return (session.scalar(select(func.max(JobEventRow.seq)).where(JobEventRow.job_id == job_id)) or 0) + 1


def append_event(session: Session, job_id: str, kind: str, payload: dict[str, Any]) -> int:
    """Add the job's next event; returns its seq. Concurrent writers (the worker and an API
    request) retry on the seq's unique constraint."""
    for _ in range(_EVENT_INSERT_TRIES):
        try:
            with session.begin_nested():
                seq = _next_seq(session, job_id)
                session.add(JobEventRow(job_id=job_id, seq=seq, kind=kind, payload=payload))
            return seq
        except IntegrityError:
            continue
    raise StorageError(f"could not number an event of job {job_id} (too many concurrent writers)")


def create_job(session: Session, *, kind: str, owner: str, request: dict[str, Any],
               bank_id: int | None) -> JobPublic:
    """A new queued job."""
    now = utcnow()
    row = JobRow(id=new_job_id(), kind=kind, owner=owner, bank_id=bank_id, status="queued", request=request,
                 progress={}, attempts=0, cancel_requested=False, created_at=now, updated_at=now)
    session.add(row)
    session.flush()
    append_event(session, row.id, "status", {"status": "queued"})
    return _public(row)


def _owned_row(session: Session, job_id: str, owner: str | None) -> JobRow:
    row = session.get(JobRow, job_id)
    if row is None or (owner is not None and row.owner != owner):
        raise NotFoundError(f"no job with id {job_id!r}")
    return row


def get_job(session: Session, job_id: str, owner: str | None = None) -> JobPublic:
    """The job; `NotFoundError` when it does not exist or belongs to another owner."""
    return _public(_owned_row(session, job_id, owner))


def list_jobs(session: Session, owner: str, *, kind: str | None = None, status: JobStatus | None = None,
              bank_id: int | None = None, limit: int = 50, offset: int = 0) -> list[JobPublic]:
    """The owner's jobs, newest first."""
    query = select(JobRow).where(JobRow.owner == owner)
    for column, value in ((JobRow.kind, kind), (JobRow.status, status), (JobRow.bank_id, bank_id)):
        if value is not None:
            query = query.where(column == value)
    query = query.order_by(JobRow.created_at.desc(), JobRow.id).limit(limit).offset(offset)
    return [_public(row) for row in session.scalars(query)]


def jobs_on_bank(session: Session, owner: str, bank_id: int, kind: str, **request: Any) -> list[JobPublic]:
    """The owner's jobs of `kind` on a bank whose request holds the given values, oldest first."""
    rows = session.scalars(select(JobRow).where(JobRow.owner == owner, JobRow.kind == kind, JobRow.bank_id == bank_id)
                           .order_by(JobRow.created_at, JobRow.id))
    return [_public(row) for row in rows if all(row.request.get(key) == value for key, value in request.items())]


def latest_request(session: Session, owner: str, bank_id: int, kind: str) -> dict[str, Any]:
    """The request of the owner's newest job of `kind` on a bank; {} when there is none."""
    request = session.scalar(select(JobRow.request).where(JobRow.owner == owner, JobRow.kind == kind,
                                                         JobRow.bank_id == bank_id)
                             .order_by(JobRow.created_at.desc(), JobRow.id.desc()).limit(1))
    return request or {}


def list_events(session: Session, job_id: str, *, after: int = 0, kind: str | None = None,
                limit: int | None = None) -> list[JobEventPublic]:
    """The job's events with seq > `after`, in order."""
    query = select(JobEventRow).where(JobEventRow.job_id == job_id, JobEventRow.seq > after)
    if kind is not None:
        query = query.where(JobEventRow.kind == kind)
    query = query.order_by(JobEventRow.seq)
    if limit is not None:
        query = query.limit(limit)
    return [JobEventPublic.model_validate(row) for row in session.scalars(query)]


def claim_job(engine: Engine, job_id: str, *, worker: str, lease_s: float) -> Claim | None:
    """Take the job for `worker` if it is queued or its lease expired; None when another worker
    holds it or it is final. Taking over an expired lease records that the job's worker stopped,
    as the sweep (`requeue_stale_jobs`) does when it finds the job first."""
    with open_session(engine) as session:
        now = utcnow()

        def take(claimable: Any) -> bool:
            return session.execute(
                update(JobRow).where(JobRow.id == job_id, claimable)
                .values(status="running", worker=worker, lease_until=now + timedelta(seconds=lease_s),
                        attempts=JobRow.attempts + 1, updated_at=now)
                .execution_options(synchronize_session=False)).rowcount == 1

        took_over = False
        if not take(JobRow.status == "queued"):
            took_over = take(and_(JobRow.status == "running", JobRow.lease_until < now))
            if not took_over:
                return None
        row = session.get(JobRow, job_id, populate_existing=True)
        assert row is not None
        if took_over:
            append_event(session, job_id, "status", {"status": "queued", "reason": "its worker stopped"})
        append_event(session, job_id, "status", {"status": "running", "attempt": row.attempts})
        return Claim(job_id=job_id, worker=worker, attempt=row.attempts, kind=row.kind, owner=row.owner,
                     bank_id=row.bank_id, request=dict(row.request), cancel_requested=row.cancel_requested)


def _fence(claim: Claim):  # a SQLAlchemy where clause
    return and_(JobRow.id == claim.job_id, JobRow.worker == claim.worker, JobRow.attempts == claim.attempt,
                JobRow.status == "running")


@contextmanager
def fenced_session(engine: Engine, claim: Claim, **changes: Any) -> Iterator[tuple[Session, bool]]:
    """A transaction that first touches the claimed job row (applying `changes`), so it commits
    only while the claim holds (on PostgreSQL the row stays locked until the commit). Yields the
    session and whether a cancel was requested; raises `LeaseLost` when the claim is gone."""
    with open_session(engine) as session:
        touched = session.execute(update(JobRow).where(_fence(claim)).values(updated_at=utcnow(), **changes)
                                  .execution_options(synchronize_session=False))
        if touched.rowcount != 1:
            raise LeaseLost(f"job {claim.job_id}: attempt {claim.attempt} of {claim.worker} no longer holds it")
        cancel = bool(session.scalar(select(JobRow.cancel_requested).where(JobRow.id == claim.job_id)))
        yield session, cancel


def renew_lease(engine: Engine, claim: Claim, lease_s: float) -> bool:
    """Extend the claim's lease; returns whether a cancel was requested. Raises `LeaseLost`."""
    with fenced_session(engine, claim, lease_until=utcnow() + timedelta(seconds=lease_s)) as (_, cancel):
        return cancel


def finish_job(engine: Engine, claim: Claim, status: JobStatus, *, result: dict[str, Any] | None = None,
               error: str | None = None, progress: dict[str, Any] | None = None) -> None:
    """End the claimed job as succeeded, failed or cancelled. Raises `LeaseLost`."""
    if status not in FINAL_STATUSES:
        raise ValueError(f"{status!r} is not a final status")
    changes: dict[str, Any] = {"status": status, "result": result, "error": error, "lease_until": None}
    if progress is not None:
        changes["progress"] = progress
    with fenced_session(engine, claim, **changes) as (session, _):
        append_event(session, claim.job_id, "status", {"status": status, "error": error})


def release_job(engine: Engine, claim: Claim, reason: str) -> None:
    """Hand the claimed job back to the queue (the runner stops); it continues when claimed again."""
    with fenced_session(engine, claim, status="queued", lease_until=None) as (session, _):
        append_event(session, claim.job_id, "status", {"status": "queued", "reason": reason})


def cancel_job(session: Session, job_id: str, owner: str) -> JobPublic:
    """Cancel the owner's job: a queued job at once; a running one is asked to stop (its worker
    ends it as cancelled at its next event, keeping what it finished). Final jobs: `JobStateError`."""
    row = _owned_row(session, job_id, owner)
    now = utcnow()
    stopped = session.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "queued")
                              .values(status="cancelled", cancel_requested=True, lease_until=None, updated_at=now)
                              .execution_options(synchronize_session=False))
    if stopped.rowcount == 1:
        append_event(session, job_id, "status", {"status": "cancelled", "error": None})
    else:
        asked = session.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "running")
                                .values(cancel_requested=True, updated_at=now)
                                .execution_options(synchronize_session=False))
        if asked.rowcount != 1:
            session.refresh(row)
            raise JobStateError(f"job {job_id} is already {row.status}; only queued or running jobs can be cancelled")
        append_event(session, job_id, "cancel_requested", {})
    session.refresh(row)
    return _public(row)


def requeue_job(session: Session, job_id: str, owner: str) -> JobPublic:
    """Queue the owner's failed or cancelled job again, under the same id (see `resume_job`)."""
    row = _owned_row(session, job_id, owner)
    resumed = session.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status.in_(("failed", "cancelled")))
                              .values(status="queued", cancel_requested=False, error=None, lease_until=None,
                                      updated_at=utcnow())
                              .execution_options(synchronize_session=False))
    session.refresh(row)
    if resumed.rowcount != 1:
        raise JobStateError(f"job {job_id} is {row.status}; only failed or cancelled jobs can be resumed")
    append_event(session, job_id, "status", {"status": "queued", "reason": "resumed"})
    return _public(row)


def requeue_stale_jobs(engine: Engine, *, queued_for_s: float) -> list[str]:
    """Jobs no live worker holds, to dispatch again: running ones whose lease expired (their worker
    died) go back to ``queued``, and jobs queued for longer than `queued_for_s` (their dispatch
    was lost, e.g. the process that queued them stopped). Each returned job is marked as queued
    just now, so concurrent or later sweeps do not return it again before `queued_for_s`."""
    now = utcnow()
    expired = and_(JobRow.status == "running", JobRow.lease_until < now)
    waiting = and_(JobRow.status == "queued", JobRow.updated_at <= now - timedelta(seconds=queued_for_s))
    requeued = []
    with open_session(engine) as session:
        for job_id, status in session.execute(select(JobRow.id, JobRow.status).where(or_(expired, waiting))
                                              .order_by(JobRow.created_at)):
            still = expired if status == "running" else waiting
            touched = session.execute(update(JobRow).where(JobRow.id == job_id, still)
                                      .values(status="queued", lease_until=None, updated_at=now)
                                      .execution_options(synchronize_session=False))
            if touched.rowcount == 1:
                if status == "running":
                    append_event(session, job_id, "status", {"status": "queued", "reason": "its worker stopped"})
                requeued.append(job_id)
    return requeued
