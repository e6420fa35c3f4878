"""Running one job, the same way on every runner: claim it, keep its lease alive, run its kind,
record the outcome."""

from __future__ import annotations

import logging
import os
import re
import socket
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from itemsmith.service.jobs._context import Heartbeat, Interruption, JobContext, JobInterrupted
from itemsmith.service.jobs._kinds import JOB_KINDS
from itemsmith.service.jobs._schemas import JobStatus
from itemsmith.service.jobs._store import LeaseLost, claim_job, finish_job, release_job
from itemsmith.service.jobs._transient import is_transient, retry_transient
from itemsmith.service.settings import ServiceSettings

__all__ = ["execute_job", "worker_name"]

log = logging.getLogger("itemsmith.jobs")
_MAX_ERROR_CHARS = 2000


def worker_name(kind: str) -> str:
    """A name unique to this process and runner, e.g. ``celery:host:1234:9f2c1a``."""
    return f"{kind}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _error_text(exc: BaseException, uploads_dir: Path) -> str:
    """The error as one bounded line without secrets or the paths of uploaded handlers (a job's
    error is shown to its owner: server paths never leave the server)."""
    from itemsmith.agents.llm.inference import redact  # the model layer: only when a job fails

    text = redact(f"{type(exc).__name__}: {exc}")
    for folder in sorted({str(uploads_dir), str(uploads_dir.resolve())}, key=len, reverse=True):
        text = re.sub(re.escape(folder) + r"[^\s'\"]*", "<uploaded handler>", text)
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + "..."


def execute_job(engine: Engine, job_id: str, *, worker: str, settings: ServiceSettings,
                on_start: Callable[[JobContext], None] | None = None) -> JobStatus | None:
    """Run the job if it can be claimed; returns how this run left it (``queued`` when the runner
    stopped and handed it back, or a transient database error did: the runner dispatches it
    again), or None when it was not claimed or its lease was lost. The claim waits out a
    database that is away for a moment (a restart), as the job's writes do."""
    claim = retry_transient(lambda: claim_job(engine, job_id, worker=worker, lease_s=settings.job_lease_s),
                            within_s=settings.job_db_retry_s, what=f"job {job_id}: claim")
    if claim is None:
        return None
    context = JobContext(engine, claim, settings)
    if on_start is not None:
        on_start(context)
    if claim.cancel_requested:  # cancelled while its previous worker was dying
        context.interrupt("cancel")
    with Heartbeat(context, settings.job_lease_s / 3):
        try:
            return _run(context)
        except LeaseLost:
            log.warning("job %s: lease lost to another worker; this run stops", job_id)
            return None


def _run(context: JobContext) -> JobStatus | None:
    claim = context.claim
    try:
        context.raise_if_interrupted()
        if claim.kind not in JOB_KINDS:
            raise ValueError(JOB_KINDS.unknown_message(claim.kind))
        spec = JOB_KINDS[claim.kind]
        result = spec.function()(spec.request_model.model_validate(claim.request), context)
    except JobInterrupted as exc:
        return _stop(context, exc.reason)
    except Exception as exc:  # any failure of the job's code ends it as failed, with its message
        if context.interruption == "lost":
            return None
        if is_transient(exc) and claim.attempt < context.settings.job_transient_attempts:
            # the database went away under the job's own code: back to the queue, not failed
            log.warning("job %s (%s): transient database error; queued again", claim.job_id, claim.kind,
                        exc_info=True)
            reason = f"database error: {type(exc).__name__}"
            _write(context, lambda: release_job(context.engine, claim, reason))
            return "queued"
        log.exception("job %s (%s) failed", claim.job_id, claim.kind)
        error = _error_text(exc, context.settings.uploads_dir)
        _write(context, lambda: finish_job(context.engine, claim, "failed", error=error))
        return "failed"
    _write(context, lambda: finish_job(context.engine, claim, "succeeded", result=result))
    return "succeeded"


def _write(context: JobContext, write: Callable[[], None]) -> None:
    """A status write, retried across a transient database error; if the database stays away, the
    job's lease runs out and the sweeper queues it again (a finished job's run is then repeated,
    which every kind is safe to do)."""
    retry_transient(write, within_s=context.settings.job_db_retry_s, what=f"job {context.job_id}: status")


def _stop(context: JobContext, reason: Interruption) -> JobStatus | None:
    if reason == "cancel":
        _write(context, lambda: finish_job(context.engine, context.claim, "cancelled"))
        return "cancelled"
    if reason == "shutdown":
        _write(context, lambda: release_job(context.engine, context.claim, "the worker stopped"))
        return "queued"
    return None
