"""Jobs: the caller's jobs, one job, its progress events (JSON or a server-sent event stream),
cancel and resume."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, status
from fastapi.responses import StreamingResponse
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from itemsmith.api.deps import PrincipalDep, SessionDep
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.service.jobs import (
    FINAL_STATUSES,
    JobEventPublic,
    JobKind,
    JobPublic,
    JobStatus,
    cancel_job,
    get_job,
    list_events,
    list_jobs,
    resume_job,
)
from itemsmith.templates_bank.storage import open_session

router = APIRouter(prefix="/jobs", tags=["jobs"], route_class=TextCheckedRoute)

POLL_S = 0.5  # how often a stream looks for new events
KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing an idle stream
_NOT_FOUND = {404: {"description": "no such job (or not yours)"}}


@router.get("")
def list_jobs_route(principal: PrincipalDep, session: SessionDep, kind: JobKind | None = None,
                    status_: Annotated[JobStatus | None, Query(alias="status")] = None,
                    bank_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
                    limit: Annotated[int, Query(ge=1, le=500)] = 50,
                    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0) -> list[JobPublic]:
    """The caller's jobs, newest first (optionally of one kind, status or bank)."""
    return list_jobs(session, principal.owner, kind=kind, status=status_, bank_id=bank_id, limit=limit, offset=offset)


@router.get("/{job_id}", responses=_NOT_FOUND)
def get_job_route(job_id: str, principal: PrincipalDep, session: SessionDep) -> JobPublic:
    """The job: status, live progress (for an authoring job: templates queued, in flight,
    accepted, rejected by stage, stored; tokens and cost), result or error."""
    return get_job(session, job_id, principal.owner)


def _poll(engine: Engine, job_id: str, after: int) -> tuple[str, list[JobEventPublic]]:
    # the status is read first: the event of a final status is written with it, so once the
    # status read is final, the events read next include the last one
    with open_session(engine) as session:
        job_status = get_job(session, job_id).status
        return job_status, list_events(session, job_id, after=after, limit=500)


def _sse(event: JobEventPublic) -> str:
    return f"id: {event.seq}\nevent: {event.kind}\ndata: {event.model_dump_json()}\n\n"


async def _stream(request: Request, job_id: str, after: int) -> AsyncIterator[str]:
    engine = request.app.state.engine
    last_sent = time.monotonic()
    while True:
        job_status, events = await run_in_threadpool(_poll, engine, job_id, after)
        for event in events:
            yield _sse(event)
            after = event.seq
        if events:
            last_sent = time.monotonic()
            continue  # there may be more than one page
        if job_status in FINAL_STATUSES or await request.is_disconnected():
            return
        if time.monotonic() - last_sent >= KEEPALIVE_S:
            yield ": keep-alive\n\n"
            last_sent = time.monotonic()
        await asyncio.sleep(POLL_S)


@router.get("/{job_id}/events", response_model=list[JobEventPublic], responses={
    **_NOT_FOUND, 200: {"description": "the events as a JSON list, or as server-sent events",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}}})
def job_events_route(
    job_id: str, request: Request, principal: PrincipalDep, session: SessionDep,
    after: Annotated[int, Query(ge=0, le=2**31 - 1, description="only events with a larger seq")] = 0,
    limit: Annotated[int, Query(ge=1, le=5000, description="at most this many (JSON list only)")] = 1000,
    last_event_id: Annotated[int | None, Header(ge=0, le=2**31 - 1,
                                                description="resume a stream after this seq")] = None,
) -> StreamingResponse | list[JobEventPublic]:
    """The job's progress events in order (``seq`` from 1). With ``Accept: text/event-stream``:
    a server-sent event stream (``id`` = seq, ``event`` = kind, ``data`` = the event as JSON) that
    follows the job until it ends; a reconnecting client's ``Last-Event-ID`` continues after that
    event. Otherwise the events after ``after`` as a JSON list."""
    get_job(session, job_id, principal.owner)
    start = max(after, last_event_id or 0)
    if "text/event-stream" in request.headers.get("accept", ""):
        return StreamingResponse(_stream(request, job_id, start), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return list_events(session, job_id, after=start, limit=limit)


@router.post("/{job_id}/cancel", status_code=status.HTTP_202_ACCEPTED, responses={
    **_NOT_FOUND, 409: {"description": "the job has ended already"}})
def cancel_job_route(job_id: str, principal: PrincipalDep, session: SessionDep) -> JobPublic:
    """Cancel the job: a queued job at once; a running job stops at its next step (it ends as
    ``cancelled``; templates it accepted stay in the bank). Resume it later to continue."""
    return cancel_job(session, job_id, principal.owner)


@router.post("/{job_id}/resume", status_code=status.HTTP_202_ACCEPTED, responses={
    **_NOT_FOUND, 409: {"description": "the job is not failed or cancelled"}})
def resume_job_route(job_id: str, request: Request, principal: PrincipalDep) -> JobPublic:
    """Queue a failed or cancelled job again under the same id: it continues from where it
    stopped (finished templates are neither redone nor stored twice)."""
    return resume_job(request.app.state.engine, job_id, owner=principal.owner, runner=request.app.state.job_runner)
