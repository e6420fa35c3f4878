"""The ``author`` job: `agents.authoring.run.author` with the job id as run id and its checkpoint in the
job database, progress as job events, and every accepted template stored in the bank with its
verdicts. Which stages run, with which models (`agents.stages.pipeline`; unset judges or students: the
server's defaults), is published first (a ``stages`` event) and is part of the result. The result
measures the stored templates' diversity; with a student pool, the stored templates are then
calibrated on the pool's answers (`calibrate_authored`; the result says why not, e.g. too few
students).

Resumable: a job claimed again (its worker died, the runner restarted, or its owner resumed it)
reruns `author` with the same run id, which reuses the plan and the finished slots and continues
unfinished slots from their last completed step. Storing is idempotent: a version is keyed by the
sha256 of its source within the bank, and a version's verdicts are stored once per job. What
finished before a cancel, a failure or a shutdown is stored too (read back from the checkpoint).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from itemsmith.agents.authoring.checkpoint import open_checkpointer, setup_checkpointer
from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.graph import build_slot_graph
from itemsmith.agents.authoring.models import Brief, RunReport, SlotResult
from itemsmith.agents.authoring.run import FINAL, author, slot_result
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.settings import get_settings
from itemsmith.agents.stages.pipeline import Pipeline, resolve_pipeline
from itemsmith.sandbox import SandboxPool
from itemsmith.service.jobs._calibrate import calibrate_authored
from itemsmith.service.jobs._context import JobContext, JobInterrupted
from itemsmith.service.jobs._progress import AuthorProgress
from itemsmith.service.jobs._schemas import AuthorJobRequest
from itemsmith.service.jobs._store import append_event
from itemsmith.service.jobs._verdicts import recorded_by, store_accepted
from itemsmith.service.settings import request_policy
from itemsmith.templates_bank.diversity import stored_diversity
from itemsmith.templates_bank.handler_identity import handler_ref, redact_handler_paths
from itemsmith.templates_bank.storage import TemplateVersionPublic, find_version, normalize_url, open_session
from itemsmith.verification.structure import check_structure

__all__ = ["author_config", "checkpoint_url", "run_author_job", "setup_job_checkpoints"]

log = logging.getLogger("itemsmith.jobs")


def checkpoint_url(database_url: str) -> str:
    """Where authoring jobs keep their LangGraph checkpoints: the bank database itself on
    PostgreSQL; beside it on SQLite (``bank.sqlite`` -> ``bank.checkpoints.sqlite``: one writer
    per file keeps SQLite's locks short)."""
    url = normalize_url(database_url)
    if url.get_backend_name() == "postgresql":
        return url.set(drivername="postgresql").render_as_string(hide_password=False)
    if url.database in (None, "", ":memory:"):
        return "memory"
    path = Path(url.database)
    return str(path.with_name(f"{path.stem}.checkpoints.sqlite"))


def setup_job_checkpoints(database_url: str) -> None:
    """Create the checkpoint tables of the jobs on `database_url` (``itemsmith db upgrade``): a
    job never runs LangGraph's migrations itself (on PostgreSQL they wait for every open
    transaction of the database)."""
    url = checkpoint_url(database_url)
    setup_checkpointer(url, default_path=Path(url))


def author_config(request: AuthorJobRequest, context: JobContext) -> AuthorConfig:
    return AuthorConfig(
        **{name: value for name, value in request if name != "bank_id"},  # the specs as parsed
        out_dir=context.settings.uploads_dir.parent / "job_runs",
        checkpoint=checkpoint_url(context.settings.database_url), checkpoint_setup=False, run_id=context.job_id)


def _progress(context: JobContext) -> AuthorProgress:
    """The summary so far, replayed from the job's earlier events (a resumed job keeps its counts)."""
    progress = AuthorProgress()
    for event in context.events():
        if event.kind == "slot":
            progress.apply(SlotEvent.model_validate(event.payload))
        elif event.kind == "template":
            progress.stored += 1
    return progress


async def _author(config: AuthorConfig, context: JobContext, progress: AuthorProgress,
                  pool: SandboxPool, pipeline: Pipeline) -> RunReport | None:
    """The run's report; None when the job was interrupted (cancel, shutdown, lost lease)."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None

    def stop() -> None:
        try:
            loop.call_soon_threadsafe(main.cancel)
        except RuntimeError:  # the run already ended and its loop is closed
            pass

    def on_event(event: SlotEvent) -> None:
        if event.message:  # a sandbox message may name the handler's files: events go to the job's owner
            event = event.model_copy(update={"message": redact_handler_paths(event.message, config.handler)})
        progress.apply(event)
        try:
            context.publish("slot", event.model_dump(mode="json"), progress=progress.summary())
        except JobInterrupted:
            pass  # `stop` is already cancelling the run

    context.on_interrupt(stop)
    try:
        return await author(config, on_event=on_event, pool=pool, policy=request_policy(), pipeline=pipeline)
    except asyncio.CancelledError:
        if context.interruption is None:
            raise
        return None


async def _finished_slots(config: AuthorConfig) -> list[SlotResult]:
    """The slots of the run that ended (accepted, discarded, failed), read from its checkpoint."""
    generator = str(config.generator or get_settings().default_generator())
    run_id = config.run_id
    async with open_checkpointer(config.checkpoint, default_path=config.out_dir / "checkpoints.sqlite",
                                 setup=False) as saver:
        plan = await saver.aget_tuple({"configurable": {"thread_id": f"{run_id}:plan", "checkpoint_ns": ""}})
        briefs = (plan.checkpoint["channel_values"].get("briefs") or []) if plan is not None else []
        graph = build_slot_graph(max_rounds=config.rounds, checkpointer=saver)
        results = []
        for i, raw in enumerate(briefs):
            state = await graph.aget_state({"configurable": {"thread_id": f"{run_id}:slot:{i}"}})
            if state.values.get("status") in FINAL and not state.next:
                results.append(slot_result(state.values, Brief.model_validate(raw), run_id=str(run_id),
                                           handler=config.handler, generator=generator))
    return results


def _store_one(context: JobContext, request: AuthorJobRequest, slot: SlotResult, pool: SandboxPool,
               progress: AuthorProgress) -> TemplateVersionPublic:
    """The accepted template's version in the bank, stored (once) with this job's verdicts (once)."""
    template, decision, bank_id = slot.template, slot.decision, context.bank_id
    assert template is not None and decision is not None and bank_id is not None
    with context.fenced() as session:
        version = find_version(session, bank_id, template.content_hash)
        if version is not None and recorded_by(session, version.id, context.job_id):
            return version
    # a fresh structure check for the record (students are keyed by the items the audit drew for them)
    structure = check_structure(template.source, request.handler, num_samples=request.num_samples, seed=request.seed,
                                pool=pool)
    results = slot.attempts[-1].verification if slot.attempts else []
    with context.fenced() as session:
        version, stored = store_accepted(session, bank_id, template, structure=structure, results=results,
                                         decision=decision, run_id=context.job_id, created_by=context.owner)
        if stored:
            append_event(session, context.job_id, "template", {"slot": slot.slot, **_described(version)})
    progress.stored += stored
    return version


def _described(version: TemplateVersionPublic) -> dict[str, Any]:
    return {"version_id": version.id, "template_key": version.template_key, "content_hash": version.content_hash,
            "title": version.title}


def _store(context: JobContext, request: AuthorJobRequest, slots: list[SlotResult], pool: SandboxPool,
           progress: AuthorProgress) -> list[dict[str, Any]]:
    """Store every accepted slot's template; returns what the bank holds for them."""
    stored = [{"slot": slot.slot, **_described(_store_one(context, request, slot, pool, progress))}
              for slot in slots if slot.template is not None and slot.decision is not None]
    context.publish("stored", {"templates": len(stored)}, progress=progress.summary())
    return stored


def run_author_job(request: AuthorJobRequest, context: JobContext) -> dict[str, Any]:
    config = author_config(request, context)
    progress = _progress(context)
    pipeline = resolve_pipeline(config, get_settings())
    stages = [stage.model_dump(mode="json") for stage in pipeline.stages]
    context.publish("stages", {"stages": stages})
    with SandboxPool(request.handler, workers=request.sandbox_workers) as pool:
        try:
            report = asyncio.run(_author(config, context, progress, pool, pipeline))
        except Exception:
            if context.interruption != "lost":
                _store(context, request, asyncio.run(_finished_slots(config)), pool, progress)
            raise
        if context.interruption == "lost":
            raise JobInterrupted("lost")
        slots = report.slots if report is not None else asyncio.run(_finished_slots(config))
        stored = _store(context, request, slots, pool, progress)
    if report is None:
        context.raise_if_interrupted()
    assert report is not None
    if report.slots and all(slot.status in ("failed", "errored") for slot in report.slots):
        raise AuthoringFailed(_why_every_slot_failed(report))
    summary = {**report.summary(), "handler": handler_ref(request.handler).model_dump()}
    result: dict[str, Any] = {"summary": summary, "stages": stages, "templates": stored}
    versions = {t["template_key"]: t["version_id"] for t in stored}
    if versions:
        with open_session(context.engine) as session:
            result["diversity"] = stored_diversity(session, versions).model_dump(mode="json")
    if pipeline.students:  # a student pool answered: calibrate what was stored on those answers
        result["calibration"] = calibrate_authored(context, versions)
    return result


class AuthoringFailed(RuntimeError):
    """No slot produced a template, and every slot ended on an error (its model calls failed; an
    errored slot resumes where it stopped when the run is run again)."""


def _why_every_slot_failed(report: RunReport) -> str:
    """The job's error: how many slots failed and their distinct errors (the first few)."""
    errors = list(dict.fromkeys(slot.error or "no error recorded" for slot in report.slots))
    shown = "; ".join(errors[:3]) + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")
    plan = f" (the planner also failed: {report.plan.errors[0]})" if report.plan.errors else ""
    return (f"all {len(report.slots)} template slots failed and none produced a template{plan}: {shown}")
