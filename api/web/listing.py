"""What the review page shows of a bank: the REST listing's page (`service.review.list_templates`:
status, decision stage, latest judge panel's score, latest IRT parameters and decision, all from
the per-version summaries) and the bank's categories for the filter menu."""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy.orm import Session

from itemsmith.api.models import TemplateSummary
from itemsmith.items.schema import Decision, IRTParameters
from itemsmith.service.review import TemplateFilters, bank_categories, list_templates

__all__ = ["ReviewListing", "ReviewRow", "review_listing"]


class ReviewRow(BaseModel):
    summary: TemplateSummary
    irt: IRTParameters | None = None
    decision: Decision | None = None


class ReviewListing(BaseModel):
    total: int
    rows: list[ReviewRow]
    categories: list[str]


def review_listing(session: Session, bank_id: int, filters: TemplateFilters) -> ReviewListing:
    """One page of the bank's versions that pass ``filters``, with the total count."""
    page = list_templates(session, bank_id, filters)
    rows = [ReviewRow(summary=summary, irt=summary.irt, decision=summary.decision) for summary in page.items]
    return ReviewListing(total=page.total, rows=rows, categories=bank_categories(session, bank_id))
