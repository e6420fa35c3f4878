"""The review page: server-rendered HTML (Jinja2) over the storage layer, outside the OpenAPI
schema. Log in with an API key, browse your banks and their template versions, look at a
version's source, sample items with plots and every verdict, approve or reject it."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated, Literal, get_args

from fastapi import APIRouter, Form, HTTPException, Path, Query, Request, Response, status
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import Field
from sqlalchemy import func, select

from itemsmith.service.access import owned_bank, owned_version
from itemsmith.service.auth import authenticate
from itemsmith.api.deps import SessionDep
from itemsmith.api.models import DecisionStage, RecordId
from itemsmith.service.review import TemplateFilters, version_status
from itemsmith.api.routes.templates import reviewer_name
from itemsmith.api.web.listing import review_listing
from itemsmith.api.web.login import LOGIN_PATH, ReviewerDep, check_form, clear_login, safe_next, set_login
from itemsmith.api.web.samples import SAMPLE_SEED, plot_png, sample_items
from itemsmith.templates_bank.storage import (
    BankPublic,
    NotFoundError,
    ReviewCreate,
    VersionStatus,
    list_reviews,
    list_student_responses,
    list_verdicts,
    list_versions,
    record_review,
)
from itemsmith.templates_bank.storage._models import BankRow, TemplateVersionRow

__all__ = ["router"]

_HERE = FilePath(__file__).parent
templates = Jinja2Templates(directory=_HERE / "templates")
router = APIRouter(prefix="/review", include_in_schema=False)
# a mount does not take the router's prefix: its full path
router.mount("/review/static", StaticFiles(directory=_HERE / "static"), name="review-static")

PAGE_SIZE = 50
MAX_NOTE_CHARS = 2000
STATUSES: tuple[VersionStatus, ...] = get_args(VersionStatus)
STAGES: tuple[DecisionStage, ...] = get_args(DecisionStage)


def _not_found(request: Request, message: str) -> HTMLResponse:
    return templates.TemplateResponse(request, "not_found.html", {"message": message},
                                      status_code=status.HTTP_404_NOT_FOUND)


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> HTMLResponse:  # noqa: A002 - the query's name
    return templates.TemplateResponse(request, "login.html", {"next": safe_next(next), "error": None})


@router.post("/login")
def login(request: Request, session: SessionDep, api_key: Annotated[str, Form(max_length=200)],
          next: Annotated[str, Form(max_length=2000)] = "/review") -> Response:  # noqa: A002 - the form field's name
    if authenticate(session, api_key.strip()) is None:
        return templates.TemplateResponse(request, "login.html",
                                          {"next": safe_next(next), "error": "Unknown or revoked API key."},
                                          status_code=status.HTTP_401_UNAUTHORIZED)
    response = RedirectResponse(safe_next(next), status_code=status.HTTP_303_SEE_OTHER)
    set_login(response, request, api_key.strip())
    return response


@router.get("/logout")
def logout() -> RedirectResponse:
    response = RedirectResponse(LOGIN_PATH, status_code=status.HTTP_303_SEE_OTHER)
    clear_login(response)
    return response


@router.get("")
def banks(request: Request, session: SessionDep, reviewer: ReviewerDep) -> HTMLResponse:
    counts = (select(BankRow, func.count(TemplateVersionRow.id))
              .outerjoin(TemplateVersionRow, TemplateVersionRow.bank_id == BankRow.id)
              .where(BankRow.owner == reviewer.principal.owner).group_by(BankRow.id).order_by(BankRow.name))
    rows = [(BankPublic.model_validate(bank), count) for bank, count in session.execute(counts)]
    return templates.TemplateResponse(request, "banks.html", {"reviewer": reviewer, "banks": rows})


@router.get("/banks/{bank_id}")
def bank(request: Request, session: SessionDep, reviewer: ReviewerDep, bank_id: RecordId,
         status_filter: Annotated[VersionStatus | Literal[""], Query(alias="status")] = "",
         stage: DecisionStage | Literal[""] = "", category: Annotated[str, Query(max_length=100)] = "",
         min_score: Annotated[Annotated[float, Field(ge=1, le=10)] | Literal[""], Query()] = "",
         all_versions: bool = False,
         page: Annotated[int, Query(ge=1, le=200_000)] = 1) -> HTMLResponse:
    try:
        bank = owned_bank(session, bank_id, reviewer.principal.owner)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
    filters = TemplateFilters(status=status_filter or None, stage=stage or None, category=category or None,
                              min_score=min_score if min_score != "" else None, latest=not all_versions,
                              limit=PAGE_SIZE,
                              offset=(page - 1) * PAGE_SIZE)
    listing = review_listing(session, bank_id, filters)
    # the filters as the form sent them (empty ones left out): kept by the form and the pager's links
    query = {name: value for name, value in (("status", status_filter), ("stage", stage), ("category", category),
                                             ("min_score", min_score), ("all_versions", "1" if all_versions else ""))
             if value != ""}
    return templates.TemplateResponse(request, "bank.html", {
        "reviewer": reviewer, "bank": bank, "listing": listing, "statuses": STATUSES, "stages": STAGES,
        "query": query, "page": page, "pages": max(1, -(-listing.total // PAGE_SIZE))})


@router.get("/templates/{version_id}")
def template(request: Request, session: SessionDep, reviewer: ReviewerDep, version_id: RecordId,
             decided: Literal["approve", "reject", ""] = "") -> HTMLResponse:
    try:
        version, bank = owned_version(session, version_id, reviewer.principal.owner)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
    verdicts = list_verdicts(session, version_id)
    irt = [v for v in verdicts if v.stage == "irt"]
    return templates.TemplateResponse(request, "template.html", {
        "reviewer": reviewer, "bank": bank, "version": version,
        "status": version_status(session, version_id),
        "samples": sample_items(version.source, version.handler or bank.handler), "seed": SAMPLE_SEED,
        "verdicts": verdicts, "irt": irt[-1].payload if irt else None,
        "responses": list_student_responses(session, version_id), "reviews": list_reviews(session, version_id),
        "history": list_versions(session, bank.id, version.template_key), "decided": decided})


@router.get("/templates/{version_id}/items/{index}/plot.png")
def item_plot(session: SessionDep, reviewer: ReviewerDep, version_id: RecordId,
              index: Annotated[int, Path(ge=0, le=99)]) -> Response:
    version, bank = owned_version(session, version_id, reviewer.principal.owner)  # NotFoundError: a JSON 404
    png = plot_png(sample_items(version.source, version.handler or bank.handler), index)
    if png is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"template version {version_id} has no plotted item {index}")
    # a version and its sample seed never change: the image may be cached, privately
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})


@router.post("/templates/{version_id}/decision")
def decide(request: Request, session: SessionDep, reviewer: ReviewerDep, version_id: RecordId,
           decision: Annotated[Literal["approve", "reject"], Form()], csrf_token: Annotated[str, Form()],
           note: Annotated[str, Form(max_length=MAX_NOTE_CHARS)] = "") -> Response:
    check_form(request, reviewer, csrf_token)
    try:
        owned_version(session, version_id, reviewer.principal.owner)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
    principal = reviewer.principal
    record_review(session, version_id, ReviewCreate(decision=decision, note=note.strip(),
                                                    reviewer=reviewer_name(principal.owner, principal.key_id)))
    return RedirectResponse(f"/review/templates/{version_id}?decided={decision}", status_code=status.HTTP_303_SEE_OTHER)
