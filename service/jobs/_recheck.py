"""The ``recheck`` job: a stored template version (typically an edit a reviewer saved) goes
through the structure check in the sandbox, the item audit (always) and the configured content
stages again; the verdicts and the decision are stored on the version under the job id (once)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.orm import Session

from itemsmith.agents.model_factory import retry_policy
from itemsmith.agents.profile import profile_handler
from itemsmith.agents.run import AuthorConfig
from itemsmith.agents.settings import get_settings
from itemsmith.agents.verification_stages import (
    ItemAuditVerifier,
    build_review_models,
    content_stages,
    verification_stages,
)
from itemsmith.agents.verify import VerificationResult, run_stages
from itemsmith.items.schema import AuditReport, Decision, StructureReport
from itemsmith.sandbox import SandboxPool
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._kinds import job_kind
from itemsmith.service.jobs._schemas import RecheckJobRequest
from itemsmith.service.jobs._store import append_event
from itemsmith.service.jobs._verdicts import record_verification, recorded_by
from itemsmith.service.settings import request_policy
from itemsmith.templates_bank.storage import BankRow, NotFoundError, get_version, list_verdicts, open_session
from itemsmith.verification.structure import check_structure

__all__ = ["run_recheck_job"]


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
            settings = get_settings()
            models = build_review_models(config, settings=settings, policy=request_policy())
            stages = verification_stages(ItemAuditVerifier(handler, pool=pool), content_stages(
                models, config, dataset=profile_handler(pool).description, retry=retry_policy(settings)))
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
    structure, decision, audit = verdicts["structure"], verdicts["decision"], verdicts.get("audit")
    assert isinstance(structure, StructureReport) and isinstance(decision, Decision)
    return {"version_id": version_id, "structure": structure.status.value, "error": structure.error,
            "audit": audit.summary() if isinstance(audit, AuditReport) else None,
            "decision": decision.model_dump(mode="json")}
