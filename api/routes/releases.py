"""Releases: freeze a bank and export a release (both jobs with progress: a release generates every
item in the sandbox and stores it, an export streams the stored items; an export's zip is
downloaded from its finished job), read releases, verify that a release still reproduces,
re-verify with a new judge panel, evaluate a model, calibrate and audit the release's items (jobs
whose results are the reproduction report, the diff, the accuracy report, the parameters and the
static audit)."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.responses import FileResponse
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from itemsmith.api.deps import PrincipalDep, SessionDep
from itemsmith.api.models import (
    CalibrationCreate,
    EvaluationCreate,
    RecordId,
    ReleaseCreateRequest,
    ReleasePublic,
    ReverifyCreate,
    validation_message,
)
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.items.rendering import TextFormat
from itemsmith.service.access import owned_bank, owned_release, owned_releases, reviewer_name
from itemsmith.service.auth import Principal
from itemsmith.service.jobs import (
    AuditJobRequest,
    CalibrateJobRequest,
    EvaluateJobRequest,
    ExportJobRequest,
    JobKind,
    JobPublic,
    ReleaseJobRequest,
    ReverifyJobRequest,
    VerifyJobRequest,
    export_file,
    get_job,
    jobs_on_bank,
    submit_job,
)
from itemsmith.templates_bank.adaptive import AdaptiveConfig
from itemsmith.templates_bank.exporters import EXPORTERS
from itemsmith.templates_bank.releases import ReleaseCreate, ReleaseManifest
from itemsmith.templates_bank.storage import BankPublic, ReleaseRow, releasable_versions

router = APIRouter(tags=["releases"], route_class=TextCheckedRoute)

_BANK_ERRORS = {404: {"description": "no such bank (or not yours)"}}
_RELEASE_ERRORS = {404: {"description": "no such release (or not yours)"}}
ExportFormat = Annotated[str, Query(alias="format", pattern="^(" + "|".join(sorted(EXPORTERS)) + ")$",
                                    description="export format: " + ", ".join(sorted(EXPORTERS)))]
_PLOTS = "also PNG plots (formats: " + ", ".join(sorted(n for n, s in EXPORTERS.items() if s.plots)) + ")"


def _public(row: ReleaseRow) -> ReleasePublic:
    manifest = ReleaseManifest.model_validate(row.manifest)
    return ReleasePublic(id=row.id, bank_id=row.bank_id, number=row.number, ref=manifest.ref, checksum=row.checksum,
                         created_at=row.created_at, manifest=manifest)


@router.post("/banks/{bank_id}/releases", status_code=status.HTTP_202_ACCEPTED, responses={
    **_BANK_ERRORS, 409: {"description": "nothing releasable, or a named template is not releasable"},
    422: {"description": "bad seeds or options"}})
def create_release_route(bank_id: RecordId, body: ReleaseCreateRequest, request: Request, principal: PrincipalDep,
                         session: SessionDep) -> JobPublic:
    """Start a ``release`` job that freezes the bank's approved/accepted templates into its next
    numbered release (every item is generated once in the sandbox and stored with it, a run an
    earlier release generated with the same key is reused; progress events count the runs). The finished job's ``result`` names the release (``release_id``)."""
    bank = owned_bank(session, bank_id, principal.owner)
    try:
        ReleaseCreate(bank=bank.name, owner=bank.owner, seeds=body.seeds, num_samples=body.num_samples,
                      template_ids=body.template_ids, note=body.note, created_by="check")
    except ValidationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, validation_message(exc)) from None
    releasable = {version.template_key for version in releasable_versions(session, bank.id)}
    missing = [key for key in body.template_ids or [] if key not in releasable]
    if not releasable or missing:
        raise HTTPException(status.HTTP_409_CONFLICT, f"not releasable (no approved or accepted version): "
                                                      f"{', '.join(missing) or 'every template of the bank'}")
    job_request = ReleaseJobRequest(bank_id=bank.id, seeds=body.seeds, num_samples=body.num_samples,
                                    template_ids=body.template_ids, note=body.note,
                                    created_by=reviewer_name(principal.owner, principal.key_id))
    return _start_job(request, principal, "release", job_request, bank)


@router.get("/banks/{bank_id}/releases", responses=_BANK_ERRORS)
def list_releases_route(bank_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[ReleasePublic]:
    """The bank's releases, oldest first."""
    return [_public(row) for row in owned_releases(session, bank_id, principal.owner)]


@router.get("/releases/{release_id}", responses=_RELEASE_ERRORS)
def get_release_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> ReleasePublic:
    row, _ = owned_release(session, release_id, principal.owner)
    return _public(row)


@router.post("/releases/{release_id}/exports", status_code=status.HTTP_202_ACCEPTED, responses={
    **_RELEASE_ERRORS, 422: {"description": "bad options"}})
def export_route(release_id: RecordId, request: Request, principal: PrincipalDep, session: SessionDep,
                 fmt: ExportFormat = "jsonl", text_format: TextFormat = TextFormat.plain,
                 decimals: Annotated[int, Query(ge=0, le=10)] = 2,
                 plots: Annotated[bool, Query(description=_PLOTS)] = False) -> JobPublic:
    """Start an ``export`` job that writes the release in an export format as a zip (data files,
    manifest.json, export.json, SHA256SUMS); the release's stored items are read and checked
    against the release's hashes (progress events count the rows). Download the zip from the
    finished job: ``GET /exports/{job_id}``. The same release and options give the same bytes."""
    row, bank = owned_release(session, release_id, principal.owner)
    if plots and not EXPORTERS[fmt].plots:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"format {fmt!r} does not carry plots ({_PLOTS})")
    job_request = ExportJobRequest(release_id=row.id, format=fmt, text_format=text_format, decimals=decimals,
                                   plots=plots)
    return _start_job(request, principal, "export", job_request, bank)


@router.get("/exports/{job_id}", response_class=FileResponse, responses={
    200: {"content": {"application/zip": {}}, "description": "the export's files, zipped"},
    404: {"description": "no such export job (or not yours)"},
    409: {"description": "the export job has not succeeded (yet)"}})
def download_export_route(job_id: str, request: Request, principal: PrincipalDep, session: SessionDep) -> FileResponse:
    """The zip an ``export`` job wrote."""
    job = get_job(session, job_id, principal.owner)
    if job.kind != "export":
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"job {job_id} is not an export job")
    if job.status != "succeeded" or job.result is None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"the export job is {job.status}; download it once it succeeded")
    path = export_file(request.app.state.settings.uploads_dir, job.id)
    if not path.is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, "the export's file is gone; start the export again")
    return FileResponse(path, media_type="application/zip", filename=job.result["file"])


@router.post("/releases/{release_id}/verifications", status_code=status.HTTP_202_ACCEPTED,
             responses=_RELEASE_ERRORS)
def verify_route(release_id: RecordId, request: Request, principal: PrincipalDep, session: SessionDep) -> JobPublic:
    """Start a job that runs the release's templates again on its seeds and compares their items,
    byte for byte, with the stored ones (what ``itemsmith release verify`` prints; progress events
    count the runs). Its result says whether the release reproduces and, per template, what
    differs. A release made before items were stored is checked against its manifest's hashes, and
    its items are then stored."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _start_job(request, principal, "verify", VerifyJobRequest(bank=bank.name, release=row.number), bank)


@router.get("/releases/{release_id}/verifications", responses=_RELEASE_ERRORS)
def list_verifications_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's verification jobs, oldest first; a finished job's ``result`` is its report."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "verify", bank, row.number, principal.owner)


def _start_job(request: Request, principal: Principal, kind: JobKind, job_request: BaseModel,
               bank: BankPublic) -> JobPublic:
    """Queue a job of the caller's on the release's bank and dispatch it."""
    return submit_job(request.app.state.engine, kind=kind, owner=principal.owner,
                      request=job_request, bank_id=bank.id, runner=request.app.state.job_runner)


def _release_jobs(session: Session, kind: str, bank: BankPublic, number: int, owner: str) -> list[JobPublic]:
    return jobs_on_bank(session, owner, bank.id, kind, release=number)


@router.post("/releases/{release_id}/reverify", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def reverify_route(release_id: RecordId, body: ReverifyCreate, request: Request, principal: PrincipalDep,
                   session: SessionDep) -> JobPublic:
    """Start a job that judges the release again with a new panel; its result is the diff
    against the verdicts on record (cached answers are reused)."""
    row, bank = owned_release(session, release_id, principal.owner)
    job_request = ReverifyJobRequest(bank=bank.name, release=row.number, judges=body.judges, students=body.students)
    return _start_job(request, principal, "reverify", job_request, bank)


@router.get("/releases/{release_id}/reverifications", responses=_RELEASE_ERRORS)
def list_reverifications_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's re-verification jobs, oldest first; a finished job's ``result`` is its diff."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "reverify", bank, row.number, principal.owner)


@router.post("/releases/{release_id}/evaluations", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def evaluate_route(release_id: RecordId, body: EvaluationCreate, request: Request, principal: PrincipalDep,
                   session: SessionDep) -> JobPublic:
    """Start a job that answers every item of the release with one model (optionally on fresh
    instances); its result is the accuracy report. With ``adaptive``, the job asks fresh instances
    of the most informative calibrated templates until ``target_se`` or ``max_items``; its result
    is the adaptive report (ability +- SE, predicted accuracy on the release, items used,
    trajectory, and the seed it drew: ``config.seed``)."""
    row, bank = owned_release(session, release_id, principal.owner)
    adaptive = None
    if body.adaptive:
        defaults = AdaptiveConfig()
        adaptive = AdaptiveConfig(
            max_items=body.max_items or defaults.max_items, target_se=body.target_se or defaults.target_se,
            seed=body.fresh_seed if body.fresh_seed is not None else secrets.randbits(31))
    job_request = EvaluateJobRequest(bank=bank.name, release=row.number, model=body.model,
                                     formats=[f.value for f in body.formats],
                                     fresh_seed=None if body.adaptive else body.fresh_seed, adaptive=adaptive)
    return _start_job(request, principal, "evaluate", job_request, bank)


@router.get("/releases/{release_id}/evaluations", responses=_RELEASE_ERRORS)
def list_evaluations_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's evaluation jobs, oldest first; a finished job's ``result`` is its report."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "evaluate", bank, row.number, principal.owner)


@router.post("/releases/{release_id}/calibrations", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def calibrate_route(release_id: RecordId, body: CalibrationCreate, request: Request, principal: PrincipalDep,
                    session: SessionDep) -> JobPublic:
    """Start a job that fits the template-level 2PL to every answer stored for the release's
    templates and stores the parameters as new irt verdicts; its result lists the parameters, the
    respondents' abilities and the templates to review. Too few respondents fail the job with the
    count needed (unless ``priors``)."""
    row, bank = owned_release(session, release_id, principal.owner)
    job_request = CalibrateJobRequest(bank=bank.name, release=row.number, priors=body.priors,
                                      min_respondents=body.min_respondents)
    return _start_job(request, principal, "calibrate", job_request, bank)


@router.get("/releases/{release_id}/calibrations", responses=_RELEASE_ERRORS)
def list_calibrations_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's calibration jobs, oldest first; a finished job's ``result`` is its calibration."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "calibrate", bank, row.number, principal.owner)


@router.post("/releases/{release_id}/audits", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def audit_route(release_id: RecordId, request: Request, principal: PrincipalDep, session: SessionDep) -> JobPublic:
    """Start a job that audits the release's items as a fixed set, what ``itemsmith release audit``
    prints: per group (blind solvers and item checks on the items the group holds, each test with
    its power), per category and overall (exact duplicates across groups). Generated templates'
    items are read as the release stored them; the result is the report."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _start_job(request, principal, "audit", AuditJobRequest(bank=bank.name, release=row.number), bank)


@router.get("/releases/{release_id}/audits", responses=_RELEASE_ERRORS)
def list_audits_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's audit jobs, oldest first; a finished job's ``result`` is its report."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "audit", bank, row.number, principal.owner)
