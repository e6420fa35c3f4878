"""What a reviewer sees: the filtered template listing, and one version's status.

The listing reads the per-version summaries the bank maintains on every verdict and review
write (``template_summaries``, see `templates_bank.storage._summaries`): status (a person's
latest review wins, else the pipeline's latest decision, else ``pending``), the pipeline's
decision stage (the filter ``stage=review`` matches the versions a person decided), the latest judge panel's mean score, the latest IRT
parameters and decision. A page is two indexed statements (the count of matches, then the page
joined to its versions), whatever the size of the bank: the total is summed from the bank's
per-(newest?, status, category, stage) counters, except under a judge-score filter, where it is
counted; ``history=true`` adds every panel's
score for the page's rows only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from itemsmith.items.schema import AuditReport, Decision, IRTParameters
from itemsmith.templates_bank.storage import (
    BankPublic,
    BankRow,
    TemplateSummaryCountRow,
    TemplateSummaryRow,
    TemplateVersionRow,
    VerdictRow,
    VersionStatus,
    judge_panels,
    refresh_summary,
    releasable_versions,
)

__all__ = ["CategoryAudit", "DecisionStage", "JudgePanelScore", "TemplateFilters", "TemplatePage", "TemplateSummary",
           "audits_by_category", "bank_categories", "banks_with_version_counts", "list_templates", "version_status"]

DecisionStage = Literal["structure", "audit", "rederivation", "judges", "students", "capability", "review"]


class JudgePanelScore(BaseModel):
    """One judge panel's mean score of a version (a panel: the judge verdicts of one run)."""

    run_id: str | None = Field(description="the job or run that recorded the panel's verdicts")
    judges: list[str]
    score: float | None = Field(description="mean over criteria and judges (1 to 10); None: no parseable score")
    created_at: datetime


class TemplateSummary(BaseModel):
    """One template version in the review listing."""

    id: int = Field(description="the version id")
    template_key: str
    title: str
    category: str
    status: VersionStatus
    decision_stage: DecisionStage | None = Field(description="the stage of the pipeline's latest decision")
    judge_score: float | None = Field(description="mean of the latest judge panel's scores (1 to 10) over criteria "
                                                  "and judges")
    judge_history: list[JudgePanelScore] | None = Field(
        None, description="every panel's mean score, oldest first (only with history=true)")
    parent_version_id: int | None
    created_at: datetime
    irt: IRTParameters | None = Field(None, description="the latest IRT parameters")
    decision: Decision | None = Field(None, description="the pipeline's latest decision")


class TemplatePage(BaseModel):
    total: int = Field(description="versions matching the filters")
    limit: int
    offset: int
    items: list[TemplateSummary]


class TemplateFilters(BaseModel):
    """Filters and page of the review listing."""

    model_config = ConfigDict(extra="forbid")

    status: VersionStatus | None = Field(None, description="approved/rejected by a person, accepted/declined by "
                                                           "the pipeline, or pending")
    stage: DecisionStage | None = Field(None, description="the stage of the pipeline's latest decision; review: "
                                                          "the versions a person approved or rejected")
    category: str | None = Field(None, max_length=100)
    min_score: float | None = Field(None, ge=1, le=10, description="lowest mean score of the latest judge panel")
    latest: bool = Field(True, description="only the newest version of each template")
    history: bool = Field(False, description="also every judge panel's mean score per version")
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10_000_000)


def _filters_on(table: Any, bank_id: int, filters: TemplateFilters) -> list[Any]:
    """The listing's filters (but the judge score) on the summary table or its per-bank counters:
    both have the bank, latest flag, status, category and decision stage columns."""
    wanted = [table.bank_id == bank_id]
    if filters.latest:
        wanted.append(table.is_latest.is_(True))
    for column, value in ((table.status, filters.status), (table.category, filters.category)):
        if value is not None:
            wanted.append(column == value)
    if filters.stage == "review":
        wanted.append(table.status.in_(("approved", "rejected")))
    elif filters.stage is not None:
        wanted.append(table.decision_stage == filters.stage)
    return wanted


def _conditions(bank_id: int, filters: TemplateFilters) -> list[Any]:
    wanted = _filters_on(TemplateSummaryRow, bank_id, filters)
    if filters.min_score is not None:
        wanted.append(TemplateSummaryRow.judge_score >= filters.min_score)
    return wanted


def _total(session: Session, bank_id: int, filters: TemplateFilters, wanted: list[Any]) -> int:
    """The number of matches: summed from the bank's counters (a few rows, whatever the bank's
    size), or counted when a judge-score filter is set (the counters do not split by score)."""
    if filters.min_score is not None:
        return session.scalar(select(func.count()).select_from(TemplateSummaryRow).where(*wanted)) or 0
    counts = TemplateSummaryCountRow
    keyed = _filters_on(counts, bank_id, filters)
    return int(session.scalar(select(func.coalesce(func.sum(counts.count), 0)).where(*keyed)) or 0)


def list_templates(session: Session, bank_id: int, filters: TemplateFilters) -> TemplatePage:
    """One page of the bank's template versions, oldest first, with the total matching count."""
    summary, versions = TemplateSummaryRow, TemplateVersionRow
    wanted = _conditions(bank_id, filters)
    total = _total(session, bank_id, filters, wanted)
    rows = session.execute(
        select(summary, versions.title, versions.parent_version_id, versions.created_at)
        .join(versions, versions.id == summary.version_id).where(*wanted)
        .order_by(summary.version_id).limit(filters.limit).offset(filters.offset)).all()
    history = judge_panels(session, [row[0].version_id for row in rows]) if filters.history and rows else {}
    items = [TemplateSummary(
        id=s.version_id, template_key=s.template_key, title=title, category=s.category, status=s.status,
        decision_stage=s.decision_stage, judge_score=s.judge_score,
        judge_history=[JudgePanelScore(**panel) for panel in history.get(s.version_id, [])] if filters.history else None,
        parent_version_id=parent_id, created_at=created_at,
        irt=None if s.irt is None else IRTParameters.model_validate(s.irt),
        decision=None if s.decision is None else Decision.model_validate(s.decision))
        for s, title, parent_id, created_at in rows]
    return TemplatePage(total=total, limit=filters.limit, offset=filters.offset, items=items)


def version_status(session: Session, version_id: int) -> VersionStatus:
    """One version's status (the listing's rule, from its summary)."""
    status = session.scalar(select(TemplateSummaryRow.status).where(TemplateSummaryRow.version_id == version_id))
    if status is None:  # stored before the summaries and never backfilled
        refresh_summary(session, version_id)
        status = session.scalar(select(TemplateSummaryRow.status).where(TemplateSummaryRow.version_id == version_id))
    return status  # type: ignore[return-value]


def bank_categories(session: Session, bank_id: int) -> list[str]:
    """The categories of the bank's template versions, sorted (the review page's filter)."""
    return list(session.scalars(select(TemplateSummaryRow.category).where(TemplateSummaryRow.bank_id == bank_id)
                                .distinct().order_by(TemplateSummaryRow.category)))


def banks_with_version_counts(session: Session, owner: str) -> list[tuple[BankPublic, int]]:
    """The owner's banks by name, each with its number of template versions."""
    counts = (select(BankRow, func.count(TemplateVersionRow.id))
              .outerjoin(TemplateVersionRow, TemplateVersionRow.bank_id == BankRow.id)
              .where(BankRow.owner == owner).group_by(BankRow.id).order_by(BankRow.name))
    return [(BankPublic.model_validate(bank), count) for bank, count in session.execute(counts)]


class CategoryAudit(BaseModel):
    """The item audits of one category's releasable templates (each its newest audit verdict)."""

    category: str
    templates: int
    items: int
    failing: int
    failed_checks: dict[str, int] = Field(description="check -> templates failing it")
    shortcuts: dict[str, int] = Field(description="blind solver -> templates it answers without the data")


def audits_by_category(session: Session, bank_id: int) -> list[CategoryAudit]:
    """Per category, what the newest audit of each releasable template found (templates without
    an audit verdict are left out); an imported benchmark's static audit reads here per category."""
    versions = {v.id: v.category for v in releasable_versions(session, bank_id)}
    newest: dict[int, AuditReport] = {}
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                           .where(VerdictRow.template_version_id.in_(list(versions)), VerdictRow.stage == "audit")
                           .order_by(VerdictRow.id))
    for version_id, payload in rows:
        newest[version_id] = AuditReport.model_validate(payload)
    by_category: dict[str, list[AuditReport]] = {}
    for version_id, report in newest.items():
        by_category.setdefault(versions[version_id], []).append(report)

    def tally(names: list[str]) -> dict[str, int]:
        return {name: names.count(name) for name in sorted(set(names))}

    return [CategoryAudit(category=category, templates=len(reports), items=sum(r.n_items for r in reports),
                          failing=sum(1 for r in reports if not r.passed),
                          failed_checks=tally([c for r in reports for c in r.failed_checks]),
                          shortcuts=tally([s for r in reports for s in r.shortcuts]))
            for category, reports in sorted(by_category.items())]
