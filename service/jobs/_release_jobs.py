"""The ``reverify`` and ``evaluate`` jobs: thin wrappers around `service.release_operations`
(the same operations the command line runs), with the job id as the run id. Both run to the end
once started (a cancel stops them only before they start)."""

from __future__ import annotations

from typing import Any

from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._schemas import EvaluateJobRequest, ReverifyJobRequest
from itemsmith.service.release_operations import evaluate, evaluate_adaptive, reverify
from itemsmith.service.settings import request_policy
from itemsmith.templates_bank.adaptive import AdaptiveReport
from itemsmith.templates_bank.calibration import current_parameters, refresh_calibration
from itemsmith.templates_bank.evaluation import EvaluationReport, EvaluationStore
from itemsmith.templates_bank.releases import Release, get_release
from itemsmith.templates_bank.storage import BankSession, open_session

__all__ = ["run_evaluate_job", "run_reverify_job"]


def _release(context: JobContext, bank: str, number: int) -> Release:
    """The release, which must be of the job's bank (by id: another owner may use the name)."""
    with open_session(context.engine) as session:
        return get_release(session, bank, number, context.owner, bank_id=context.bank_id)


def run_reverify_job(request: ReverifyJobRequest, context: JobContext) -> dict[str, Any]:
    release = _release(context, request.bank, request.release)
    with BankSession(context.engine, expire_on_commit=False) as session:
        report = reverify(session, release, judges=request.judges, students=request.students, run_id=context.job_id,
                          policy=request_policy())
    return report.model_dump(mode="json")


def run_evaluate_job(request: EvaluateJobRequest, context: JobContext) -> dict[str, Any]:
    """Every answer is stored under the job id, so a job claimed again (or resumed after a model
    failed) asks only what is missing; a new respondent refreshes the release's calibration. With
    ``adaptive``, the result is the adaptive report (ability +- SE, predicted accuracy, items used,
    trajectory), from the same operation as ``release evaluate --adaptive``."""
    release = _release(context, request.bank, request.release)
    with BankSession(context.engine, expire_on_commit=False) as session:
        store = EvaluationStore.open(session, release, context.job_id, adaptive=request.adaptive is not None)
        parameters = current_parameters(session, release)
    report: EvaluationReport | AdaptiveReport
    if request.adaptive is not None:
        report = evaluate_adaptive(release, model=request.model, parameters=parameters, config=request.adaptive,
                                   text_format=request.formats[0], store=store, policy=request_policy())
    else:
        report = evaluate(release, model=request.model, formats=request.formats, fresh_seed=request.fresh_seed,
                          concurrency=request.concurrency, store=store, parameters=parameters,
                          policy=request_policy(), on_progress=context.progress("answered", "items", steps=100))
    with BankSession(context.engine, expire_on_commit=False) as session:
        refreshed = refresh_calibration(session, release, context.job_id, str(request.model), commit=True)
    calibration = {"refreshed": refreshed} if isinstance(refreshed, str) else {"calibration_id": refreshed.calibration_id}
    return {**report.model_dump(mode="json"), "calibration": calibration}
