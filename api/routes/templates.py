"""Review: list a bank's templates, read one with its verdicts and regenerated sample items,
plot an item, approve or reject, and edit (a new version, verified again by a recheck job)."""

from __future__ import annotations

import ast
import hashlib
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request, Response, status
from sqlalchemy.orm import Session

from itemsmith.api.deps import PrincipalDep, SessionDep, release_session
from itemsmith.api.models import (
    RecordId,
    ReviewRequest,
    TemplateDetail,
    TemplateEdit,
    TemplateEdited,
    TemplatePage,
    TemplateVersionView,
)
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.items.schema import IRTParameters, Item, Provenance, Template
from itemsmith.sandbox import RunResult
from itemsmith.sandbox.render import RenderError, render_item_png
from itemsmith.service.access import owned_bank, owned_version, reviewer_name
from itemsmith.service.jobs import JobPublic, RecheckJobRequest, jobs_on_bank, latest_request, submit_job
from itemsmith.service.review import TemplateFilters, list_templates, version_status
from itemsmith.templates_bank.handler_identity import redact_handler_paths
from itemsmith.templates_bank.storage import (
    ReviewCreate,
    ReviewPublic,
    TemplateVersionPublic,
    add_template_version,
    find_version,
    list_reviews,
    list_student_responses,
    list_verdicts,
    open_session,
    record_review,
)

router = APIRouter(tags=["review"], route_class=TextCheckedRoute)

_VERSION_ERRORS = {404: {"description": "no such template version (or not yours)"}}
SeedQuery = Annotated[int, Query(ge=0, le=2**31 - 1, description="seed of the regenerated items")]
PLOT_MAX_AGE_S = 86_400


def _sample(request: Request, owner: str, version: TemplateVersionPublic, handler: str, num_samples: int,
            seed: int) -> RunResult:
    """Items of a version regenerated in the sandbox (`service.sampling`: cached, fair between owners),
    after the request's session is given back; a failure is a result, a full queue `SamplerBusy`."""
    release_session(request)
    return request.app.state.sampler.sample(owner, source=version.source, content_hash=version.content_hash,
                                            handler=handler, num_samples=num_samples, seed=seed)


@router.get("/banks/{bank_id}/templates", responses={404: {"description": "no such bank (or not yours)"}})
def list_templates_route(bank_id: RecordId, filters: Annotated[TemplateFilters, Query()], principal: PrincipalDep,
                         session: SessionDep) -> TemplatePage:
    """The bank's template versions, oldest first, filtered by status, decision stage, category
    and mean judge score; ``total`` counts every match."""
    owned_bank(session, bank_id, principal.owner)
    return list_templates(session, bank_id, filters)


@router.get("/templates/{version_id}", responses=_VERSION_ERRORS)
def get_template_route(version_id: RecordId, request: Request, principal: PrincipalDep, session: SessionDep,
                       n: Annotated[int, Query(ge=1, le=20, description="sample items to regenerate")] = 3,
                       seed: SeedQuery = 0) -> TemplateDetail:
    """A version's source and metadata, every verdict, student answer and review, its IRT
    parameters and ``n`` items regenerated in the sandbox."""
    version, bank = owned_version(session, version_id, principal.owner)
    verdicts = list_verdicts(session, version_id)
    irt = [v for v in verdicts if v.stage == "irt"]
    handler = version.handler or bank.handler
    stored = {"version": TemplateVersionView.of(version), "status": version_status(session, version_id),
              "verdicts": verdicts, "responses": list_student_responses(session, version_id),
              "reviews": list_reviews(session, version_id),
              "irt": IRTParameters.model_validate(irt[-1].payload) if irt else None}
    result = _sample(request, principal.owner, version, handler, n, seed)
    error = None if result.ok else redact_handler_paths(f"{result.status.value}: {result.error}", handler)
    return TemplateDetail(**stored, samples=[Item.model_validate(raw) for raw in result.items] if result.ok else [],
                          samples_seed=seed, samples_error=error)


@router.get("/templates/{version_id}/items/{index}/plot.png", response_class=Response, responses={
    200: {"content": {"image/png": {}}, "description": "the item's series as a PNG"},
    304: {"description": "unchanged (If-None-Match)"},
    404: {"description": "no such version, or the item has no series"},
    422: {"description": "the template failed to regenerate its items, or the plot worker could not draw it"}})
def plot_route(version_id: RecordId, index: Annotated[int, Path(ge=0, le=99, description="item number in the run")],
               request: Request, principal: PrincipalDep, session: SessionDep, seed: SeedQuery = 0,
               if_none_match: Annotated[str | None, Header()] = None) -> Response:
    """A PNG of item ``index`` of the version's run with ``seed``. Versions are immutable and the
    same seed gives the same items, so the ETag is fixed and clients may cache it."""
    version, bank = owned_version(session, version_id, principal.owner)
    etag = '"' + hashlib.sha256(f"{version.content_hash}:{seed}:{index}:png".encode()).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": f"private, max-age={PLOT_MAX_AGE_S}"}
    if if_none_match is not None and etag in {tag.strip() for tag in if_none_match.split(",")}:
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    handler = version.handler or bank.handler
    result = _sample(request, principal.owner, version, handler, index + 1, seed)
    if not result.ok:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, redact_handler_paths(
            f"the template failed to regenerate its items: {result.status.value}: {result.error}", handler))
    if index >= len(result.items):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"the template made {len(result.items)} items; no item {index}")
    item = Item.model_validate(result.items[index])
    if not item.series:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"item {index} has no series to plot")
    try:
        png = render_item_png(item)  # drawn by the limited plot worker, never in this process
    except RenderError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"the plot could not be drawn: {exc}") from None
    return Response(content=png, media_type="image/png", headers=headers)


@router.post("/templates/{version_id}/review", status_code=status.HTTP_201_CREATED, responses=_VERSION_ERRORS)
def review_route(version_id: RecordId, review: ReviewRequest, principal: PrincipalDep,
                 session: SessionDep) -> ReviewPublic:
    """Approve or reject a version; stored with who (the key's owner and id) and when."""
    owned_version(session, version_id, principal.owner)
    return record_review(session, version_id, ReviewCreate(
        decision=review.decision, reviewer=reviewer_name(principal.owner, principal.key_id), note=review.note))


def _check_source(source: str) -> None:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"the source has a syntax error{f' at line {exc.lineno}' if exc.lineno else ''}: "
                            f"{exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"the source cannot be parsed: {type(exc).__name__}: {exc}") from None
    if not any(isinstance(node, ast.FunctionDef) and node.name == "question" for node in tree.body):
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            "the source defines no top-level function question(num_samples)")


def _authoring_panel(session: Session, bank_id: int, owner: str) -> tuple[list[str] | None, list[str] | None]:
    """The judges and students of the bank's latest authoring job (None: it ran the server's defaults);
    no such job: none."""
    request = latest_request(session, owner, bank_id, "author")
    if not request:
        return [], []
    return request.get("judges"), request.get("students")


def _recheck_of(session: Session, version: TemplateVersionPublic, owner: str) -> JobPublic | None:
    """The newest recheck job of `owner` on the version, if any."""
    rechecks = jobs_on_bank(session, owner, version.bank_id, "recheck", version_id=version.id)
    return rechecks[-1] if rechecks else None


@router.post("/templates/{version_id}/edit", status_code=status.HTTP_202_ACCEPTED, responses={
    **_VERSION_ERRORS, 409: {"description": "this source is stored already under another template"},
    422: {"description": "the source does not parse, or is unchanged"}})
def edit_route(version_id: RecordId, edit: TemplateEdit, request: Request, principal: PrincipalDep,
               session: SessionDep) -> TemplateEdited:
    """Store an edited source as a new version (its parent: this one) and start a ``recheck``
    job that verifies it again. Idempotent: posting a source the template already has returns
    that version and its recheck job, and starts no new one."""
    parent, _ = owned_version(session, version_id, principal.owner)
    _check_source(edit.source)
    revised = Template(id=parent.template_key, source=edit.source, title=edit.title or parent.title,
                       category=parent.category, concepts=parent.concepts, handler=parent.handler,
                       difficulty=parent.difficulty, rationale=parent.rationale,
                       provenance=Provenance(origin="user", parent_hash=parent.content_hash))
    if revised.content_hash == parent.content_hash:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "the edited source is the same as this version's")
    engine = request.app.state.engine
    stored = find_version(session, parent.bank_id, revised.content_hash)
    if stored is not None and stored.template_key == parent.template_key:
        existing = _recheck_of(session, stored, principal.owner)
        if existing is not None:
            return TemplateEdited(version=TemplateVersionView.of(stored), job=existing)
    with open_session(engine) as own:  # committed before the job that reads it is queued
        version = add_template_version(own, parent.bank_id, revised,
                                       created_by=reviewer_name(principal.owner, principal.key_id))
    judges, students = _authoring_panel(session, parent.bank_id, principal.owner)
    job_request = RecheckJobRequest(version_id=version.id, judges=judges if edit.judges is None else edit.judges,
                                    students=students if edit.students is None else edit.students)
    job = submit_job(engine, kind="recheck", owner=principal.owner, request=job_request,
                     bank_id=parent.bank_id, runner=request.app.state.job_runner)
    return TemplateEdited(version=TemplateVersionView.of(version), job=job)
