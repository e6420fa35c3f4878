"""Banks: create one from a handler (uploaded source and data files, or a built-in) and a task,
which starts its authoring job; list and read the caller's banks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile, status
from pydantic import ValidationError

from itemsmith.api.deps import PrincipalDep, SessionDep, SettingsDep, release_session
from itemsmith.api.models import BankCreated, BankNameForm, BankRunSettings, BankView, RecordId, validation_message
from itemsmith.api.settings import ApiSettings
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.handlers import BUILTIN_HANDLERS, HandlerSourceError
from itemsmith.service.access import owned_bank, owned_bank_named, owned_banks
from itemsmith.service.handler_upload import UploadRejected, UploadTooLarge, new_upload_folder, store_handler
from itemsmith.service.jobs import AuthorJobRequest, submit_job
from itemsmith.templates_bank.storage import (
    BankCreate,
    BankExistsError,
    create_bank,
    open_session,
)

router = APIRouter(prefix="/banks", tags=["banks"], route_class=TextCheckedRoute)

_ERRORS = {404: {"description": "no such bank (or not yours)"}}


def _settings(raw: str | None) -> BankRunSettings:
    if raw is None or not raw.strip():
        return BankRunSettings()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"settings is not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "settings must be a JSON object")
    try:
        return BankRunSettings.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"settings: {validation_message(exc)}") from None


def _builtin(name: str, data_files: list[UploadFile]) -> str:
    entry = BUILTIN_HANDLERS.get(name)
    if entry is None:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"unknown built-in handler {name!r}; built-in handlers: {', '.join(sorted(BUILTIN_HANDLERS))}")
    if data_files:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "data files go with an uploaded handler, "
                                                                  "not with a built-in one")
    try:
        entry.load_class()
    except HandlerSourceError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"handler {name!r} is unavailable here: {exc}") from None
    return name


def _uploaded_source(handler_source: str | None, handler_file: UploadFile | None, settings: ApiSettings) -> str:
    if handler_source is not None:
        return handler_source
    assert handler_file is not None
    limit = settings.max_handler_source_bytes
    raw = handler_file.file.read(limit + 1)
    if len(raw) > limit:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"the handler file is larger than the {limit}-byte limit")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "the handler file is not UTF-8 text") from None


def _store(owner: str, bank: str, source: str, files: list[UploadFile], settings: ApiSettings) -> Path:
    """Save the handler and its data files and load it in the sandbox; its path."""
    try:
        return store_handler(new_upload_folder(settings.uploads_dir, owner, bank), source,
                             [(f.filename, f.file) for f in files], max_upload_bytes=settings.max_upload_bytes,
                             max_handler_source_bytes=settings.max_handler_source_bytes,
                             check_s=settings.handler_check_s)
    except UploadTooLarge as exc:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(exc)) from None
    except UploadRejected as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


@router.post("", status_code=status.HTTP_202_ACCEPTED, responses={
    409: {"description": "you have a bank with this name (names are unique per owner)"},
    413: {"description": "the handler source or the upload is over its size limit"},
    422: {"description": "bad settings, bad file names, or a handler that does not load in the sandbox"}})
def create_bank_route(
    request: Request,
    principal: PrincipalDep,
    session: SessionDep,
    api_settings: SettingsDep,
    name: BankNameForm,
    task: Annotated[str, Form(min_length=3, max_length=4000, description="what the benchmark should test")],
    handler: Annotated[str | None, Form(max_length=100, description="a built-in handler's name")] = None,
    handler_source: Annotated[str | None, Form(description="a handler's Python source")] = None,
    handler_file: Annotated[UploadFile | None, File(description="a handler's .py file")] = None,
    data_files: Annotated[list[UploadFile] | None, File(
        description="files the handler reads from its own folder")] = None,
    settings: Annotated[str | None, Form(description="run settings as a JSON object (see BankRunSettings)")] = None,
) -> BankCreated:
    """Create a bank and start its authoring job.

    Give exactly one of ``handler`` (built-in), ``handler_source`` or ``handler_file``. An
    uploaded handler is saved with its data files and loaded in the sandbox, never in this
    process; one that fails to load (bad source, raises, touches files or the network) is
    refused with the sandbox's message."""
    run = _settings(settings)
    files = data_files or []
    given = [v for v in (handler, handler_source, handler_file) if v is not None]
    if len(given) != 1:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            "give exactly one of handler (a built-in name), handler_source or handler_file")
    if owned_bank_named(session, name, principal.owner) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"you have a bank named {name!r} already")
    release_session(request)  # loading the handler in the sandbox holds no database connection
    if handler is not None:
        handler_spec = _builtin(handler, files)
    else:
        handler_spec = str(_store(principal.owner, name, _uploaded_source(handler_source, handler_file, api_settings),
                                  files, api_settings))
    engine = request.app.state.engine
    try:
        with open_session(engine) as own:  # committed before the job that reads it is queued
            bank = create_bank(own, BankCreate(name=name, handler=handler_spec, task=task, owner=principal.owner))
    except (BankExistsError, ValidationError) as exc:
        if handler is None:
            shutil.rmtree(Path(handler_spec).parent, ignore_errors=True)
        if isinstance(exc, BankExistsError):
            raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"bank: {validation_message(exc)}") from None
    job_request = AuthorJobRequest(bank_id=bank.id, handler=bank.handler, task=task, **dict(run))
    job = submit_job(engine, kind="author", owner=principal.owner, request=job_request,
                     bank_id=bank.id, runner=request.app.state.job_runner)
    return BankCreated(bank=BankView.of(bank), job=job)


@router.get("")
def list_banks_route(principal: PrincipalDep, session: SessionDep) -> list[BankView]:
    """The caller's banks, by name."""
    return [BankView.of(bank) for bank in owned_banks(session, principal.owner)]


@router.get("/{bank_id}", responses=_ERRORS)
def get_bank_route(bank_id: RecordId, principal: PrincipalDep, session: SessionDep) -> BankView:
    return BankView.of(owned_bank(session, bank_id, principal.owner))
