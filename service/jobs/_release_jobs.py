"""The ``reverify`` and ``evaluate`` jobs: thin wrappers around `verification.reverification`
and `verification.evaluation` (imported when a job runs), with the job id as the run id. Both
run to the end once started (a cancel stops them only before they start)."""

from __future__ import annotations

from typing import Any

from itemsmith.agents.providers import make_model
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._kinds import job_kind
from itemsmith.service.jobs._schemas import EvaluateJobRequest, ReverifyJobRequest
from itemsmith.templates_bank.releases import Release, get_release
from itemsmith.templates_bank.storage import NotFoundError, get_bank, open_session
from itemsmith.templates_bank.storage._models import BankSession

__all__ = ["run_evaluate_job", "run_reverify_job"]


def _release(context: JobContext, bank: str, number: int) -> Release:
    """The release, which must be of the job's bank."""
    with open_session(context.engine) as session:
        if context.bank_id is not None and get_bank(session, bank).id != context.bank_id:
            raise NotFoundError(f"bank {bank!r} is not this job's bank")
        return get_release(session, bank, number)


@job_kind("reverify", ReverifyJobRequest)
def run_reverify_job(request: ReverifyJobRequest, context: JobContext) -> dict[str, Any]:
    from itemsmith.verification.judges import Judge, JudgeConfig  # noqa: PLC0415
    from itemsmith.templates_bank.reverification import reverify_release  # noqa: PLC0415
    from itemsmith.verification.students import Student, StudentConfig  # noqa: PLC0415

    release = _release(context, request.bank, request.release)
    specs = dict.fromkeys([*request.judges, *(student.spec for student in request.students)])
    handles = {spec: make_model(spec) for spec in specs}
    panel = [Judge(JudgeConfig(name=spec, family=handles[spec].provider), handles[spec].model)
             for spec in request.judges]
    pool = [Student(StudentConfig(name=s.spec, rank=s.rank, model=s.spec), handles[s.spec].model)
            for s in request.students]
    # committed after each template, so answers already paid for survive a crash (and are reused)
    with BankSession(context.engine, expire_on_commit=False) as session:
        report = reverify_release(session, release, panel, students=pool, run_id=context.job_id, commit=True)
    return report.model_dump(mode="json")


@job_kind("evaluate", EvaluateJobRequest)
def run_evaluate_job(request: EvaluateJobRequest, context: JobContext) -> dict[str, Any]:
    from itemsmith.templates_bank.evaluation import evaluate_release  # noqa: PLC0415
    from itemsmith.verification.students import Student, StudentConfig  # noqa: PLC0415

    release = _release(context, request.bank, request.release)
    handle = make_model(request.model)
    student = Student(StudentConfig(name=handle.spec, rank=0, model=request.model), handle.model)
    report = evaluate_release(release, student, formats=request.formats, fresh_seed=request.fresh_seed,
                              max_concurrency=min(request.concurrency, handle.max_concurrency or request.concurrency))
    return report.model_dump(mode="json")
