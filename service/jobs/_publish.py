"""The ``release``, ``export`` and ``verify`` jobs: freezing a bank, writing a release in an export
format and running a release's templates again to compare their items can take long (a release runs every template in the sandbox: minutes for a large bank; an export
streams every stored item), so they run as jobs with progress events instead of inside a request.

A release is stored together with a ``release`` event in one transaction, so a job run again
after a crash finds that event and creates no second release. An export is written to
``<data dir>/exports/<job id>.zip`` (the same bytes on every run: fixed zip dates, sorted names)
and downloaded from the finished job; its result names the file, never its server path.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from sqlalchemy import select

from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._schemas import ExportJobRequest, ReleaseJobRequest, VerifyJobRequest
from itemsmith.service.jobs._store import append_event
from itemsmith.templates_bank.exporters import ExportOptions, export_release
from itemsmith.templates_bank.releases import ReleaseCreate, create_release, get_release
from itemsmith.templates_bank.reproducibility import verify_release
from itemsmith.templates_bank.storage import BankPublic, BankRow, NotFoundError, ReleaseRow, open_session

__all__ = ["export_file", "run_export_job", "run_release_job", "run_verify_job"]

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so the same export zips to the same bytes


def export_file(uploads_dir: Path, job_id: str) -> Path:
    """Where the export job's zip is kept (beside the uploads, in the service's data folder)."""
    return uploads_dir.parent / "exports" / f"{job_id}.zip"


def run_release_job(request: ReleaseJobRequest, context: JobContext) -> dict[str, Any]:
    done = context.events("release")
    if done:  # stored by an earlier run of this job, which stopped before it finished
        return done[-1].payload
    with open_session(context.engine) as session:
        row = session.get(BankRow, request.bank_id)
        if row is None or row.owner != context.owner:
            raise NotFoundError(f"no bank with id {request.bank_id}")
        bank = BankPublic.model_validate(row)
    create = ReleaseCreate(bank=bank.name, owner=bank.owner, seeds=request.seeds, num_samples=request.num_samples,
                           template_ids=request.template_ids, note=request.note, created_by=request.created_by)

    # the release and its event commit together (progress events commit on their own meanwhile:
    # this transaction writes nothing until the items are generated)
    with open_session(context.engine) as session:
        release = create_release(session, create, on_progress=context.progress("runs_done", "runs"))
        number = release.manifest.release
        release_id = session.scalar(select(ReleaseRow.id).where(ReleaseRow.bank_id == bank.id,
                                                                ReleaseRow.number == number))
        result = {"release_id": release_id, "number": number, "ref": release.manifest.ref,
                  "checksum": release.manifest.checksum, "templates": release.manifest.counts.templates,
                  "items": release.manifest.counts.items}
        append_event(session, context.job_id, "release", result)
    return result


def _zip_folder(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with path.open("rb") as source, archive.open(info, "w") as sink:
                while block := source.read(1 << 20):
                    sink.write(block)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def run_export_job(request: ExportJobRequest, context: JobContext) -> dict[str, Any]:
    with open_session(context.engine) as session:
        found = session.execute(select(ReleaseRow, BankRow).join(BankRow, BankRow.id == ReleaseRow.bank_id)
                                .where(ReleaseRow.id == request.release_id)).first()
        if found is None or found[1].owner != context.owner:
            raise NotFoundError(f"no release with id {request.release_id}")
        release_row, bank_row = found
        release = get_release(session, bank_row.name, release_row.number, bank_row.owner)
    options = ExportOptions(text_format=request.text_format, decimals=request.decimals, plots=request.plots)
    rows, progress = release.manifest.counts.items, context.progress("rows_done", "rows")

    target = export_file(context.settings.uploads_dir, context.job_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="itemsmith-export-", dir=target.parent))
    try:
        export_release(release, request.format, workdir / "export", options, on_row=lambda done: progress(done, rows))
        partial = workdir / "export.zip"
        _zip_folder(workdir / "export", partial)
        partial.replace(target)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    name = f"{bank_row.name}-{release_row.number}-{request.format}.zip"
    return {"release_id": request.release_id, "format": request.format, "file": name, "rows": rows,
            "bytes": target.stat().st_size, "sha256": _sha256(target)}


def run_verify_job(request: VerifyJobRequest, context: JobContext) -> dict[str, Any]:
    """The result is `ReproductionReport`: whether the release reproduces and, per template, what
    differs; a release made before items were stored has them stored when they match its hashes."""
    with open_session(context.engine) as session:
        release = get_release(session, request.bank, request.release, context.owner, bank_id=context.bank_id)
    with open_session(context.engine) as session:
        report = verify_release(session, release, on_progress=context.progress("runs_done", "runs"))
    return report.model_dump(mode="json")
