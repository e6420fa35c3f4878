"""The ``recheck`` job: a stored template version (typically an edit a reviewer saved) goes
through the same verification as `itemsmith verify` (`agents.stages.template_verification`): the
structure check in the sandbox, the item audit (always), the re-derivation (reusing the solver
program stored on the version) and the configured content stages; the verdicts and the decision
are stored on the version under the job id (once). A stage whose model calls gave no usable
reply reaches no verdict: the job fails with the provider's message and stores nothing (never a
rejection); a recheck queued again asks again."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.orm import Session

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.settings import get_settings
from itemsmith.agents.stages.rederivation import SOLVER_PROMPT_VERSION
from itemsmith.agents.stages.template_verification import verify_template
from itemsmith.items.schema import AuditReport, Decision, StructureReport
from itemsmith.sandbox import SandboxPool
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._schemas import RecheckJobRequest
from itemsmith.service.jobs._store import append_event
from itemsmith.service.jobs._verdicts import record_verification, recorded_by, stored_programs
from itemsmith.service.settings import request_policy
from itemsmith.templates_bank.storage import BankRow, NotFoundError, get_version, list_verdicts, open_session

__all__ = ["RecheckErrored", "run_recheck_job"]


class RecheckErrored(RuntimeError):
    """The recheck reached no verdict: a stage's model calls failed (missing data, not a rejection)."""


def run_recheck_job(request: RecheckJobRequest, context: JobContext) -> dict[str, Any]:
    with open_session(context.engine) as session:
        version = get_version(session, request.version_id)
        bank = session.get(BankRow, version.bank_id)
        if bank is None or (context.bank_id is not None and version.bank_id != context.bank_id):
            raise NotFoundError(f"no template version with id {request.version_id} in this bank")
        if recorded_by(session, version.id, context.job_id):  # checked before a crash
            return _recorded(session, version.id, context.job_id)
        handler, task = version.handler or bank.handler, bank.task
        programs = stored_programs(session, version.id, prompt_version=SOLVER_PROMPT_VERSION)
    config = AuthorConfig(handler=handler, task=task or f"questions about the {handler} data",
                          judges=request.judges, students=request.students, num_samples=request.num_samples,
                          seed=request.seed, sandbox_workers=1)
    with SandboxPool(handler, workers=1) as pool:
        verification = asyncio.run(verify_template(version.source, config, settings=get_settings(),
                                                   policy=request_policy(), pool=pool, programs=programs))
    structure, results, decision = verification.structure, verification.results, verification.decision
    if verification.errored:
        raise RecheckErrored(f"no verdict: the {decision.stage} stage's model calls failed "
                             f"({'; '.join(decision.reasons)}); nothing was stored: recheck again")
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
