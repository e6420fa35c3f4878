"""Long-running jobs (authoring, re-verification, evaluation, re-checks of an edited template).

A job is a row in the bank database (`JobRow`) with its request, status, live progress and
result, and numbered progress events (`JobEventRow`, streamed as server-sent events). Runners
decide where jobs run: `InProcessRunner` (threads of the API process, the default) or
`CeleryRunner` (Celery workers on Redis, ``itemsmith worker``); both run the same code
(`execute_job`). A worker holds a job by a lease it renews while it runs; a job whose worker died
is claimed again and resumes (authoring continues from its LangGraph checkpoint), and nothing it
stored is stored twice.

The kinds are `JOB_KINDS` (`_kinds`; a kind's function is imported when a job of the kind first
runs): ``author`` (`AuthorJobRequest`), ``recheck`` (`RecheckJobRequest`), ``reverify``
(`ReverifyJobRequest`), ``evaluate`` (`EvaluateJobRequest`), ``calibrate``
(`CalibrateJobRequest`), ``release`` (`ReleaseJobRequest`), ``export`` (`ExportJobRequest`: its
zip is downloaded from the finished job), ``verify`` (`VerifyJobRequest`: does a release still
reproduce?), ``import`` (`ImportJobRequest`: an uploaded benchmark's items) and ``audit``
(`AuditJobRequest`: a release's static audit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlalchemy import Engine

from itemsmith.registry import LazyTarget
from itemsmith.service.jobs._context import JobContext, JobInterrupted
from itemsmith.service.jobs._execute import execute_job
from itemsmith.service.jobs._kinds import JOB_KINDS
from itemsmith.service.jobs._runners import RUNNERS, CeleryRunner, InProcessRunner, JobRunner, get_runner, make_runner
from itemsmith.service.jobs._schemas import (
    FINAL_STATUSES,
    AuditJobRequest,
    AuthorJobRequest,
    CalibrateJobRequest,
    EvaluateJobRequest,
    ExportJobRequest,
    ImportJobRequest,
    JobEventPublic,
    JobKind,
    JobPublic,
    JobStatus,
    RecheckJobRequest,
    ReleaseJobRequest,
    ReverifyJobRequest,
    VerifyJobRequest,
)
from itemsmith.service.jobs._store import (
    JobStateError,
    cancel_job,
    create_job,
    get_job,
    jobs_on_bank,
    latest_request,
    list_events,
    list_jobs,
    requeue_job,
)
from itemsmith.service.jobs._worker_registry import alive_workers
from itemsmith.templates_bank.storage import open_session, upgrade

if TYPE_CHECKING:
    from itemsmith.service.jobs._author import setup_job_checkpoints
    from itemsmith.service.jobs._lifespan import jobs_lifespan
    from itemsmith.service.jobs._progress import AuthorProgress
    from itemsmith.service.jobs._publish import export_file
    from itemsmith.service.jobs._verdicts import store_accepted

__all__ = [
    "FINAL_STATUSES", "JOB_KINDS", "RUNNERS", "AuditJobRequest", "AuthorJobRequest", "AuthorProgress", "CalibrateJobRequest", "CeleryRunner",
    "EvaluateJobRequest", "ExportJobRequest", "ImportJobRequest", "InProcessRunner", "ReleaseJobRequest", "export_file", "JobContext", "JobEventPublic", "JobInterrupted", "JobKind", "JobPublic",
    "JobRunner", "JobStateError", "JobStatus", "RecheckJobRequest", "ReverifyJobRequest", "VerifyJobRequest", "cancel_job", "execute_job",
    "get_job", "get_runner", "jobs_lifespan", "jobs_on_bank", "latest_request", "list_events", "list_jobs", "make_runner", "resume_job",
    "setup_job_checkpoints", "store_accepted", "submit_job", "upgrade_database", "alive_workers",
]


# Names whose modules import the model layer, LangGraph, the exporters or (the worker needs no API)
# FastAPI: imported when first used, so that the API's and the worker's start-up load only what they use.
_ON_USE = {
    "AuthorProgress": "itemsmith.service.jobs._progress:AuthorProgress",
    "export_file": "itemsmith.service.jobs._publish:export_file",
    "jobs_lifespan": "itemsmith.service.jobs._lifespan:jobs_lifespan",
    "setup_job_checkpoints": "itemsmith.service.jobs._author:setup_job_checkpoints",
    "store_accepted": "itemsmith.service.jobs._verdicts:store_accepted",
}


def __getattr__(name: str) -> Any:
    if name in _ON_USE:
        return LazyTarget(_ON_USE[name]).load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def upgrade_database(database_url: str, revision: str = "head") -> None:
    """What ``itemsmith db upgrade`` does for the service: migrate the bank's (and the service's)
    tables, then create the jobs' LangGraph checkpoint tables."""
    from itemsmith.service.jobs._author import setup_job_checkpoints

    upgrade(database_url, revision)
    setup_job_checkpoints(database_url)


def submit_job(engine: Engine, *, kind: JobKind, owner: str, request: BaseModel | dict[str, Any], bank_id: int | None,
               runner: JobRunner) -> JobPublic:
    """Queue a job (committed in its own transaction) and dispatch it. The request is validated
    against the kind's model (`pydantic.ValidationError`; an instance of it is taken as it is, its
    specs parsed already); an author job's bank must be `bank_id`."""
    if kind not in JOB_KINDS:
        raise ValueError(JOB_KINDS.unknown_message(kind))
    spec = JOB_KINDS[kind]
    validated = spec.request_model.model_validate(request)
    named = getattr(validated, "bank_id", bank_id)
    if named != bank_id:
        raise ValueError(f"the request names bank {named}, the job bank {bank_id}")
    with open_session(engine) as session:
        job = create_job(session, kind=kind, owner=owner, request=validated.model_dump(mode="json"), bank_id=bank_id)
    runner.dispatch(job.id)
    return job


def resume_job(engine: Engine, job_id: str, *, owner: str, runner: JobRunner) -> JobPublic:
    """Queue the owner's failed or cancelled job again under the same id (committed in its own
    transaction) and dispatch it: it continues from its checkpoint, keeping what it stored.
    `NotFoundError` for an unknown or foreign job, `JobStateError` for one not failed or cancelled."""
    with open_session(engine) as session:
        job = requeue_job(session, job_id, owner)
    runner.dispatch(job.id)
    return job
