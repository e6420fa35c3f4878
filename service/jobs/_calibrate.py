"""The ``calibrate`` job: fit the template-level 2PL to every stored answer to a release's
templates and store the parameters as new ``irt`` verdicts (`templates_bank.calibration`), and
the calibration that follows an authoring job with a student pool (`calibrate_authored`).

Safe to run again: a calibration appends verdicts under the job id, so a job claimed again after a
crash that already stored them returns what is on record instead of fitting twice."""

from __future__ import annotations

from typing import Any

from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._schemas import CalibrateJobRequest
from itemsmith.templates_bank.calibration import (
    CalibrationError,
    CalibrationOptions,
    calibrate_release,
    calibrate_versions,
    calibration_on_record,
)
from itemsmith.templates_bank.releases import get_release
from itemsmith.templates_bank.storage import BankSession, open_session

__all__ = ["calibrate_authored", "run_calibrate_job"]


def _stored_by(context: JobContext, calibration_id: str) -> int:
    """irt verdicts the calibration already stored (a job claimed again after a crash)."""
    with open_session(context.engine) as session:
        return calibration_on_record(session, calibration_id)


def run_calibrate_job(request: CalibrateJobRequest, context: JobContext) -> dict[str, Any]:
    stored = _stored_by(context, context.job_id)
    if stored:
        return {"calibration_id": context.job_id, "resumed": True, "verdicts": stored}
    options = CalibrationOptions(priors=request.priors, min_respondents=request.min_respondents)
    with BankSession(context.engine, expire_on_commit=False) as session:
        release = get_release(session, request.bank, request.release, context.owner, bank_id=context.bank_id)
        report = calibrate_release(session, release, options, calibration_id=context.job_id, commit=True)
    return report.model_dump(mode="json")


def calibrate_authored(context: JobContext, versions: dict[str, int]) -> dict[str, Any]:
    """After an authoring job with a student pool: calibrate the templates it stored (template
    key -> version id) on their stored answers; when that cannot be done (too few students), say
    why instead of failing the authoring job."""
    if not versions:
        return {"skipped": "no template stored"}
    calibration_id = f"{context.job_id}-irt"
    stored = _stored_by(context, calibration_id)
    if stored:
        return {"calibration_id": calibration_id, "resumed": True, "verdicts": stored}
    with BankSession(context.engine, expire_on_commit=False) as session:
        try:
            report = calibrate_versions(session, versions, f"authoring job {context.job_id}",
                                        calibration_id=calibration_id, commit=True)
        except CalibrationError as exc:
            return {"skipped": str(exc)}
    return report.model_dump(mode="json")
