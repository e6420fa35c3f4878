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

from itemsmith.api.deps import SessionDep, release_session
from itemsmith.api.models import DecisionStage, RecordId
from itemsmith.api.routes.templates import reviewer_name
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.api.web.listing import review_listing
from itemsmith.api.web.login import (
    LOGIN_PATH,
    ReviewerDep,
    check_form,
    clear_login,
    login_form_error,
    new_login_token,
    safe_next,
    set_login,
    set_login_token,
)
from itemsmith.api.web.samples import SAMPLE_SEED, RenderError, plot_png, sample_items
from itemsmith.service.access import owned_bank, owned_version
from itemsmith.service.auth import authenticate
from itemsmith.service.review import TemplateFilters, audits_by_category, banks_with_version_counts, version_status
from itemsmith.templates_bank.diversity import bank_diversity
from itemsmith.templates_bank.handler_identity import handler_label
from itemsmith.templates_bank.storage import (
    NotFoundError,
    ReviewCreate,
    VersionStatus,
    list_reviews,
    list_student_responses,
    list_verdicts,
    list_versions,
    record_review,
)

__all__ = ["router"]

_HERE = FilePath(__file__).parent
templates = Jinja2Templates(directory=_HERE / "templates")
templates.env.filters["handler_label"] = handler_label  # a handler by name and hash, never its path
# The page never loads an embedding model into the service process: text similarity only.
PAGE_EMBEDDER = (None, "text similarity only (the review page loads no embedding model)")
router = APIRouter(prefix="/review", include_in_schema=False, route_class=TextCheckedRoute)
# a mount does not take the router's prefix: its full path
router.mount("/review/static", StaticFiles(directory=_HERE / "static"), name="review-static")

PAGE_SIZE = 50
MAX_NOTE_CHARS = 2000
STATUSES: tuple[VersionStatus, ...] = get_args(VersionStatus)
STAGES: tuple[DecisionStage, ...] = get_args(DecisionStage)


def _not_found(request: Request, message: str) -> HTMLResponse:
    return templates.TemplateResponse(request, "not_found.html", {"message": message},
                                      status_code=status.HTTP_404_NOT_FOUND)


def _login_page(request: Request, next_path: str | None, error: str | None, status_code: int = 200) -> Response:
    token = new_login_token()
    response = templates.TemplateResponse(request, "login.html", {"next": safe_next(next_path), "error": error,
                                                                  "csrf_token": token}, status_code=status_code)
    set_login_token(response, request, token)
    return response


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:  # noqa: A002 - the query's name
    return _login_page(request, next, None)


@router.post("/login")
def login(request: Request, session: SessionDep, api_key: Annotated[str, Form(max_length=200)],
          csrf_token: Annotated[str, Form(max_length=200)] = "",
          next: Annotated[str, Form(max_length=2000)] = "/review") -> Response:  # noqa: A002 - the form field's name
    refused = login_form_error(request, csrf_token)
    if refused is not None:
        return _login_page(request, next, refused, status.HTTP_403_FORBIDDEN)
    if authenticate(session, api_key.strip()) is None:
        return _login_page(request, next, "Unknown or revoked API key.", status.HTTP_401_UNAUTHORIZED)
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
    rows = banks_with_version_counts(session, reviewer.principal.owner)
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
    from itemsmith.templates_bank.calibration import flagged_templates  # pandas, SciPy: when a bank page is shown

    listing = review_listing(session, bank_id, filters)
    # the filters as the form sent them (empty ones left out): kept by the form and the pager's links
    query = {name: value for name, value in (("status", status_filter), ("stage", stage), ("category", category),
                                             ("min_score", min_score), ("all_versions", "1" if all_versions else ""))
             if value != ""}
    return templates.TemplateResponse(request, "bank.html", {
        "reviewer": reviewer, "bank": bank, "listing": listing, "statuses": STATUSES, "stages": STAGES,
        "query": query, "page": page, "pages": max(1, -(-listing.total // PAGE_SIZE)),
        "diversity": bank_diversity(session, bank.id, embedder=PAGE_EMBEDDER), "to_review": flagged_templates(session, bank.id),
        "audits": audits_by_category(session, bank.id)})


@router.get("/templates/{version_id}")
def template(request: Request, session: SessionDep, reviewer: ReviewerDep, version_id: RecordId,
             decided: Literal["approve", "reject", ""] = "") -> HTMLResponse:
    try:
        version, bank = owned_version(session, version_id, reviewer.principal.owner)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
    verdicts = list_verdicts(session, version_id)
    irt = [v for v in verdicts if v.stage == "irt"]
    page = {"reviewer": reviewer, "bank": bank, "version": version, "status": version_status(session, version_id),
            "seed": SAMPLE_SEED, "verdicts": verdicts, "irt": irt[-1].payload if irt else None,
            "responses": list_student_responses(session, version_id), "reviews": list_reviews(session, version_id),
            "history": list_versions(session, bank.id, version.template_key), "decided": decided}
    release_session(request)  # the sandbox run below holds no database connection
    samples = sample_items(request.app.state.sampler, reviewer.principal.owner, version,
                           version.handler or bank.handler)
    return templates.TemplateResponse(request, "template.html", {**page, "samples": samples})


@router.get("/templates/{version_id}/items/{index}/plot.png")
def item_plot(request: Request, session: SessionDep, reviewer: ReviewerDep, version_id: RecordId,
              index: Annotated[int, Path(ge=0, le=99)]) -> Response:
    version, bank = owned_version(session, version_id, reviewer.principal.owner)  # NotFoundError: a JSON 404
    release_session(request)
    samples = sample_items(request.app.state.sampler, reviewer.principal.owner, version,
                           version.handler or bank.handler)
    try:
        png = plot_png(samples, index)
    except RenderError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"the plot could not be drawn: {exc}") from None
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
