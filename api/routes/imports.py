"""Imports: bring an existing benchmark in, as a new bank or into one of the caller's banks of
imported items (what ``itemsmith bank import-items`` does; docs/auditing-a-benchmark.md).

The upload is read in the request and the items are stored by an ``import`` job. Reading the
rows is quick (the request for a 766-item, 2 MiB TimeSeriesExam file answers in 0.8 s), and a
file with a bad row must be refused with every bad row and nothing stored, so that is answered at
once (422). Storing them takes longer (9 to 11 s for those 766 items: the static audit, then one
version per group with its verdicts; `benchmarks/tse_import.py --api`), longer than a request
should hold a worker thread and a database slot, so it is a job with progress events (groups
stored), like the release and the export."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile, status
from pydantic import ValidationError

from itemsmith.api.deps import PrincipalDep, SessionDep, SettingsDep, release_session
from itemsmith.api.models import (
    BankCreated,
    BankNameForm,
    BankView,
    ImportProblem,
    ImportRejected,
    RecordId,
    validation_message,
)
from itemsmith.api.settings import ApiSettings
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.service.access import owned_bank, owned_bank_named, reviewer_name
from itemsmith.service.auth import Principal
from itemsmith.service.handler_upload import UploadTooLarge
from itemsmith.service.items_upload import ItemsFile, UploadFormat, receive_items_file
from itemsmith.service.jobs import ImportJobRequest, JobPublic, submit_job
from itemsmith.templates_bank.handler_identity import is_static_handler, static_handler
from itemsmith.templates_bank.storage import (
    BankCreate,
    BankExistsError,
    BankPublic,
    create_bank,
    open_session,
)

if TYPE_CHECKING:
    from itemsmith.templates_bank.static_items import RowProblem

router = APIRouter(prefix="/banks", tags=["imports"], route_class=TextCheckedRoute)

_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "the file is over the server's upload limit (ITEMSMITH_API_MAX_UPLOAD_BYTES)"},
    422: {"model": ImportRejected, "description": "bad rows (each with its row number and column), a file that is not "
                                                  "JSON, or bad form fields; nothing is stored"}}
FileField = Annotated[UploadFile, File(description="the benchmark file: TimeSeriesExam's qa_dataset.json (tse), or "
                                                   "JSON lines or a JSON array (jsonl)")]
FormatField = Annotated[UploadFormat, Form(alias="format", description=(
    "tse (TimeSeriesExam) or jsonl; a Hugging Face dataset is imported from a local copy by the command line "
    "(itemsmith bank import-items --format hf), or uploaded as JSON lines (Dataset.to_json)"))]
AuditField = Annotated[bool, Form(description=(
    "audit each group as it is stored (about half a second for a group of 60 items); false stores a large file "
    "quickly, to be audited as a release (POST /releases/{id}/audits)"))]
MapField = Annotated[str | None, Form(alias="map", max_length=4000, description=(
    "the file's columns of the fields, e.g. question=prompt,options=choices,answer=label,series=ts1+ts2,"
    "group=template_id (jsonl)"))]


def _problem(problem: RowProblem) -> ImportProblem:
    if problem.row is None:
        return ImportProblem(type="bad_file", loc=["body", "file"], msg=problem.message)
    loc: list[str | int] = ["body", "file", problem.row, *([problem.field] if problem.field else [])]
    return ImportProblem(type="bad_row", loc=loc, msg=problem.message, row=problem.row, field=problem.field)


def _refused(problems: list[ImportProblem]) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, [p.model_dump() for p in problems])


def _mapping(text: str | None) -> dict[str, list[str]]:
    from itemsmith.templates_bank.static_items import parse_mapping

    try:
        return parse_mapping(text)
    except ValueError as exc:
        raise _refused([ImportProblem(type="bad_map", loc=["body", "map"], msg=str(exc))]) from None


def _receive(request: Request, principal: Principal, settings: ApiSettings, bank: str, file: UploadFile,
             fmt: UploadFormat, mapping: dict[str, list[str]]) -> ItemsFile:
    """The upload saved and every row read, after the request's session is given back."""
    from itemsmith.templates_bank.static_items import ItemImportError

    release_session(request)
    try:
        return receive_items_file(settings.uploads_dir, principal.owner, bank, file.filename, file.file, fmt, mapping,
                                  max_bytes=settings.max_upload_bytes)
    except UploadTooLarge as exc:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(exc)) from None
    except ItemImportError as exc:
        raise _refused([_problem(p) for p in exc.problems]) from None


def _start(request: Request, principal: Principal, bank: BankPublic, upload: ItemsFile, fmt: UploadFormat,
           mapping: dict[str, list[str]], audit: bool) -> JobPublic:
    job_request = ImportJobRequest(bank_id=bank.id, sha256=upload.sha256, file_name=upload.file_name, format=fmt,
                                   mapping=mapping, created_by=reviewer_name(principal.owner, principal.key_id),
                                   audit=audit)
    return submit_job(request.app.state.engine, kind="import", owner=principal.owner,
                      request=job_request.model_dump(mode="json"), bank_id=bank.id, runner=request.app.state.job_runner)


@router.post("/imports", status_code=status.HTTP_202_ACCEPTED, responses={
    **_RESPONSES, 409: {"description": "you have a bank with this name (import into it: POST /banks/{bank_id}/imports)"}})
def create_bank_from_items_route(
    request: Request,
    principal: PrincipalDep,
    session: SessionDep,
    api_settings: SettingsDep,
    name: BankNameForm,
    file: FileField,
    fmt: FormatField,
    mapping: MapField = None,
    audit: AuditField = True,
    task: Annotated[str, Form(max_length=4000, description="what the benchmark tests (default: items imported "
                                                           "from FILE)")] = "",
) -> BankCreated:
    """Create a bank of an existing benchmark's items and start the ``import`` job that stores
    them: one static version per group (TimeSeriesExam's ``category`` and ``tid``, or the mapped
    ``group``) with the file's name and hash and its static audit, accepted for review. A file with
    a bad row (a key that is not one of its options, no series, a value of the wrong type or one no
    item can hold, such as a 5000-digit integer or NaN, a NUL character) is refused with every bad
    row, its number and column, and nothing is stored, the bank and the file included. The job's
    progress events count the rows read and the groups stored; its ``result`` counts the new
    versions and the groups failing the audit."""
    columns = _mapping(mapping)
    if owned_bank_named(session, name, principal.owner) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"you have a bank named {name!r} already; import into it with "
                                                      "POST /banks/{bank_id}/imports")
    upload = _receive(request, principal, api_settings, name, file, fmt, columns)
    try:
        with open_session(request.app.state.engine) as own:  # committed before the job that reads it is queued
            bank = create_bank(own, BankCreate(name=name, handler=static_handler(name), owner=principal.owner,
                                               task=task or f"items imported from {upload.file_name}"))
    except BankExistsError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    except ValidationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"bank: {validation_message(exc)}") from None
    return BankCreated(bank=BankView.of(bank), job=_start(request, principal, bank, upload, fmt, columns, audit))


@router.post("/{bank_id}/imports", status_code=status.HTTP_202_ACCEPTED, responses={
    **_RESPONSES, 404: {"description": "no such bank (or not yours)"},
    409: {"description": "the bank holds generated templates (import into a bank of imported items)"}})
def import_items_route(bank_id: RecordId, request: Request, principal: PrincipalDep, session: SessionDep,
                       api_settings: SettingsDep, file: FileField, fmt: FormatField,
                       mapping: MapField = None, audit: AuditField = True) -> JobPublic:
    """Start an ``import`` job that stores a benchmark file's items in one of the caller's banks of
    imported items, as ``POST /banks/imports`` does. Idempotent: a group already stored (the same
    items) is not stored again, a changed group becomes a new version of it."""
    bank = owned_bank(session, bank_id, principal.owner)
    if not is_static_handler(bank.handler):
        raise HTTPException(status.HTTP_409_CONFLICT, f"bank {bank.name!r} holds generated templates; import the "
                                                      "items into a bank of their own (POST /banks/imports)")
    columns = _mapping(mapping)
    upload = _receive(request, principal, api_settings, bank.name, file, fmt, columns)
    return _start(request, principal, bank, upload, fmt, columns, audit)
