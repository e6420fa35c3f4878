"""What the review page shows of a bank: the REST listing's page (`api.review.list_templates`:
status, decision stage, mean judge score, filters) plus, for the shown rows only, the latest IRT
parameters and pipeline decision, and the bank's categories for the filter menu."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.api.models import TemplateSummary
from itemsmith.service.review import TemplateFilters, list_templates
from itemsmith.templates_bank.items.schema import Decision, IRTParameters
from itemsmith.templates_bank.storage._models import TemplateVersionRow, VerdictRow

__all__ = ["ReviewListing", "ReviewRow", "review_listing"]

R = TypeVar("R", IRTParameters, Decision)


class ReviewRow(BaseModel):
    summary: TemplateSummary
    irt: IRTParameters | None = None
    decision: Decision | None = None


class ReviewListing(BaseModel):
    total: int
    rows: list[ReviewRow]
    categories: list[str]


def _record(payload: dict[str, Any] | None, record_type: type[R]) -> R | None:
    return None if payload is None else record_type.model_validate(payload)


def review_listing(session: Session, bank_id: int, filters: TemplateFilters) -> ReviewListing:
    """One page of the bank's versions that pass ``filters``, with the total count."""
    page = list_templates(session, bank_id, filters)
    ids = [summary.id for summary in page.items]
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    if ids:
        verdicts = session.execute(select(VerdictRow.template_version_id, VerdictRow.stage, VerdictRow.payload)
                                   .where(VerdictRow.template_version_id.in_(ids),
                                          VerdictRow.stage.in_(("irt", "decision")))
                                   .order_by(VerdictRow.id))
        for version_id, stage, payload in verdicts:  # oldest first: the newest one stays
            latest[(version_id, stage)] = payload
    rows = [ReviewRow(summary=summary, irt=_record(latest.get((summary.id, "irt")), IRTParameters),
                      decision=_record(latest.get((summary.id, "decision")), Decision))
            for summary in page.items]
    categories = session.scalars(select(TemplateVersionRow.category).where(TemplateVersionRow.bank_id == bank_id)
                                 .distinct().order_by(TemplateVersionRow.category))
    return ReviewListing(total=page.total, rows=rows, categories=list(categories))
