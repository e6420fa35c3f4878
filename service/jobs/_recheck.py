"""The ``recheck`` job: a stored template version (typically an edit a reviewer saved) goes
through the structure check in the sandbox and the configured content stages again; the
verdicts and the decision are stored on the version under the job id (once)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.orm import Session

from itemsmith.agents.inference import RetryPolicy
from itemsmith.agents.profile import profile_handler
from itemsmith.agents.run import AuthorConfig
from itemsmith.agents.settings import get_settings
from itemsmith.agents.verification_stages import JudgePanelVerifier, StudentPoolVerifier, build_judges, build_students
from itemsmith.agents.verify import VerificationResult, Verifier, run_stages
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._kinds import job_kind
from itemsmith.service.jobs._schemas import RecheckJobRequest
from itemsmith.service.jobs._store import append_event
from itemsmith.service.jobs._verdicts import record_verification, recorded_by
from itemsmith.sandbox import SandboxPool
from itemsmith.templates_bank.items.schema import Decision, StructureReport
from itemsmith.templates_bank.storage import NotFoundError, get_version, list_verdicts, open_session
from itemsmith.templates_bank.storage._models import BankRow
from itemsmith.verification.structure import check_structure

__all__ = ["content_stages", "run_recheck_job"]


def content_stages(config: AuthorConfig, dataset: str) -> list[Verifier]:
    """The judge panel and student pool `config` names, as the authoring loop builds them."""
    settings = get_settings()
    retry = RetryPolicy(max_retries=settings.max_retries, initial_s=settings.backoff_initial_s,
                        max_s=settings.backoff_max_s)
    stages: list[Verifier] = []
    judges = build_judges(config.judges, samples=config.judge_samples, retries=config.judge_retries,
                          max_tokens=config.review_max_tokens, settings=settings)
    if judges:
        stages.append(JudgePanelVerifier(judges, config.panel, task=config.task, dataset=dataset, retry=retry))
    students = build_students(config.students, text_format=config.student_format,
                              max_tokens=config.review_max_tokens, settings=settings)
    if students:
        stages.append(StudentPoolVerifier(students, config.pool, config.capability, task=config.task,
                                          dataset=dataset, retry=retry))
    return stages


@job_kind("recheck", RecheckJobRequest)
def run_recheck_job(request: RecheckJobRequest, context: JobContext) -> dict[str, Any]:
    with open_session(context.engine) as session:
        version = get_version(session, request.version_id)
        bank = session.get(BankRow, version.bank_id)
        if bank is None or (context.bank_id is not None and version.bank_id != context.bank_id):
            raise NotFoundError(f"no template version with id {request.version_id} in this bank")
        if recorded_by(session, version.id, context.job_id):  # checked before a crash
            return _recorded(session, version.id, context.job_id)
        handler, task = version.handler or bank.handler, bank.task
    config = AuthorConfig(handler=handler, task=task or f"questions about the {handler} data",
                          judges=request.judges, students=request.students)
    with SandboxPool(handler, workers=1) as pool:
        structure = check_structure(version.source, handler, num_samples=request.num_samples, seed=request.seed,
                                    pool=pool)
        results: list[VerificationResult] = []
        if structure.passed:
            stages = content_stages(config, profile_handler(pool).description)
            decision, _, results = asyncio.run(run_stages(stages, version.source, structure))
        else:
            decision = Decision(accepted=False, stage="structure",
                                reasons=[structure.error or f"the template ended as {structure.status.value}"])
    with context.fenced() as session:
        record_verification(session, version.id, structure=structure, results=results, decision=decision,
                            run_id=context.job_id)
        result = _recorded(session, version.id, context.job_id)
        append_event(session, context.job_id, "checked", result)
    return result


def _recorded(session: Session, version_id: int, job_id: str) -> dict[str, Any]:
    """The job's result from the verdicts it stored on the version."""
    verdicts = {v.stage: v.record for v in list_verdicts(session, version_id) if v.run_id == job_id}
    structure, decision = verdicts["structure"], verdicts["decision"]
    assert isinstance(structure, StructureReport) and isinstance(decision, Decision)
    return {"version_id": version_id, "structure": structure.status.value, "error": structure.error,
            "decision": decision.model_dump(mode="json")}
