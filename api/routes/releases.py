"""Releases: freeze a bank, read releases, download an export, re-verify with a new judge panel
and evaluate a model (both jobs, whose results are the diff and the accuracy report)."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.responses import FileResponse
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.background import BackgroundTask

from itemsmith.service.access import owned_bank, owned_release, reviewer_name
from itemsmith.api.deps import PrincipalDep, SessionDep
from itemsmith.service.jobs import EvaluateJobRequest, JobPublic, ReverifyJobRequest, submit_job
from itemsmith.api.models import (
    EvaluationCreate,
    RecordId,
    ReleaseCreateRequest,
    ReleasePublic,
    ReverifyCreate,
    validation_message,
)
from itemsmith.templates_bank.exporters import EXPORTERS, ExportError, ExportOptions, export_release
from itemsmith.templates_bank.regeneration import RegenerationError
from itemsmith.templates_bank.releases import ReleaseCreate, ReleaseError, ReleaseManifest, create_release, get_release
from itemsmith.templates_bank.items.rendering import TextFormat
from itemsmith.templates_bank.storage import BankPublic
from itemsmith.templates_bank.storage._models import JobRow, ReleaseRow

router = APIRouter(tags=["releases"])

_BANK_ERRORS = {404: {"description": "no such bank (or not yours)"}}
_RELEASE_ERRORS = {404: {"description": "no such release (or not yours)"}}
ExportFormat = Annotated[str, Query(alias="format", pattern="^(" + "|".join(sorted(EXPORTERS)) + ")$",
                                    description="export format: " + ", ".join(sorted(EXPORTERS)))]
_PLOTS = "also PNG plots (formats: " + ", ".join(sorted(n for n, s in EXPORTERS.items() if s.plots)) + ")"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so the same export zips to the same bytes


def _public(row: ReleaseRow) -> ReleasePublic:
    manifest = ReleaseManifest.model_validate(row.manifest)
    return ReleasePublic(id=row.id, bank_id=row.bank_id, number=row.number, ref=manifest.ref, checksum=row.checksum,
                         created_at=row.created_at, manifest=manifest)


@router.post("/banks/{bank_id}/releases", status_code=status.HTTP_201_CREATED, responses={
    **_BANK_ERRORS, 409: {"description": "nothing releasable, or a named template is not releasable"},
    422: {"description": "a template failed to regenerate its items"}})
def create_release_route(bank_id: RecordId, body: ReleaseCreateRequest, principal: PrincipalDep,
                         session: SessionDep) -> ReleasePublic:
    """Freeze the bank's approved/accepted templates into its next numbered release (every item
    is regenerated once in the sandbox to record its hash)."""
    bank = owned_bank(session, bank_id, principal.owner)
    try:
        request = ReleaseCreate(bank=bank.name, seeds=body.seeds, num_samples=body.num_samples,
                                template_ids=body.template_ids, note=body.note,
                                created_by=reviewer_name(principal.owner, principal.key_id))
    except ValidationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, validation_message(exc)) from None
    try:
        number = create_release(session, request).manifest.release
    except ReleaseError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    except RegenerationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    row = session.scalar(select(ReleaseRow).where(ReleaseRow.bank_id == bank.id, ReleaseRow.number == number))
    assert row is not None
    return _public(row)


@router.get("/banks/{bank_id}/releases", responses=_BANK_ERRORS)
def list_releases_route(bank_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[ReleasePublic]:
    """The bank's releases, oldest first."""
    owned_bank(session, bank_id, principal.owner)
    rows = session.scalars(select(ReleaseRow).where(ReleaseRow.bank_id == bank_id).order_by(ReleaseRow.number))
    return [_public(row) for row in rows]


@router.get("/releases/{release_id}", responses=_RELEASE_ERRORS)
def get_release_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> ReleasePublic:
    row, _ = owned_release(session, release_id, principal.owner)
    return _public(row)


def _zip_folder(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with path.open("rb") as source, archive.open(info, "w") as sink:
                while block := source.read(1 << 20):
                    sink.write(block)


@router.get("/releases/{release_id}/export", response_class=FileResponse, responses={
    **_RELEASE_ERRORS, 200: {"content": {"application/zip": {}}, "description": "the export's files, zipped"},
    422: {"description": "bad options, or the release no longer regenerates its recorded items"}})
def export_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep, fmt: ExportFormat = "jsonl",
                 text_format: TextFormat = TextFormat.plain,
                 decimals: Annotated[int, Query(ge=0, le=10)] = 2,
                 plots: Annotated[bool, Query(description=_PLOTS)] = False) -> FileResponse:
    """Download a release in an export format as a zip (data files, manifest.json, export.json,
    SHA256SUMS). Items are regenerated in the sandbox and checked against the release's hashes;
    the same release and options give the same bytes."""
    row, bank = owned_release(session, release_id, principal.owner)
    options = ExportOptions(text_format=text_format, decimals=decimals, plots=plots)
    workdir = Path(tempfile.mkdtemp(prefix="itemsmith-export-"))
    try:
        release = get_release(session, bank.name, row.number)
        export_release(release, fmt, workdir / "export", options)
        archive = workdir / "export.zip"
        _zip_folder(workdir / "export", archive)
    except (ExportError, ReleaseError, RegenerationError) as exc:
        shutil.rmtree(workdir, ignore_errors=True)
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    name = f"{bank.name}-{row.number}-{fmt}.zip"
    return FileResponse(archive, media_type="application/zip", filename=name, background=BackgroundTask(shutil.rmtree, workdir, ignore_errors=True))


def _release_jobs(session: Session, kind: str, bank: BankPublic, number: int, owner: str) -> list[JobPublic]:
    rows = session.scalars(select(JobRow).where(JobRow.owner == owner, JobRow.kind == kind, JobRow.bank_id == bank.id)
                           .order_by(JobRow.created_at, JobRow.id))
    return [JobPublic.model_validate(r) for r in rows if r.request.get("release") == number]


@router.post("/releases/{release_id}/reverify", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def reverify_route(release_id: RecordId, body: ReverifyCreate, request: Request, principal: PrincipalDep,
                   session: SessionDep) -> JobPublic:
    """Start a job that judges the release again with a new panel; its result is the diff
    against the verdicts on record (cached answers are reused)."""
    row, bank = owned_release(session, release_id, principal.owner)
    job_request = ReverifyJobRequest(bank=bank.name, release=row.number, judges=body.judges, students=body.students)
    return submit_job(request.app.state.engine, kind="reverify", owner=principal.owner,
                      request=job_request.model_dump(mode="json"), bank_id=bank.id, runner=request.app.state.job_runner)


@router.get("/releases/{release_id}/reverifications", responses=_RELEASE_ERRORS)
def list_reverifications_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's re-verification jobs, oldest first; a finished job's ``result`` is its diff."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "reverify", bank, row.number, principal.owner)


@router.post("/releases/{release_id}/evaluations", status_code=status.HTTP_202_ACCEPTED, responses=_RELEASE_ERRORS)
def evaluate_route(release_id: RecordId, body: EvaluationCreate, request: Request, principal: PrincipalDep,
                   session: SessionDep) -> JobPublic:
    """Start a job that answers every item of the release with one model (optionally on fresh
    instances); its result is the accuracy report."""
    row, bank = owned_release(session, release_id, principal.owner)
    job_request = EvaluateJobRequest(bank=bank.name, release=row.number, model=body.model,
                                     formats=[f.value for f in body.formats], fresh_seed=body.fresh_seed)
    return submit_job(request.app.state.engine, kind="evaluate", owner=principal.owner,
                      request=job_request.model_dump(mode="json"), bank_id=bank.id, runner=request.app.state.job_runner)


@router.get("/releases/{release_id}/evaluations", responses=_RELEASE_ERRORS)
def list_evaluations_route(release_id: RecordId, principal: PrincipalDep, session: SessionDep) -> list[JobPublic]:
    """The release's evaluation jobs, oldest first; a finished job's ``result`` is its report."""
    row, bank = owned_release(session, release_id, principal.owner)
    return _release_jobs(session, "evaluate", bank, row.number, principal.owner)
