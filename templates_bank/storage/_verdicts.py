"""Every verdict, student response and review decision on a template version; the answer
caches keyed by (model, prompt hash, item hash); what a version's status is."""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.items.schema import JudgeScore, StudentResponse
from itemsmith.templates_bank.storage._errors import NotFoundError
from itemsmith.templates_bank.storage._models import (
    ReviewDecisionRow,
    StudentResponseRow,
    TemplateVersionRow,
    VerdictRow,
)
from itemsmith.templates_bank.storage._schemas import (
    STAGE_RECORDS,
    ReviewCreate,
    ReviewPublic,
    Stage,
    StudentResponsePublic,
    TemplateVersionPublic,
    VerdictPublic,
    VerdictRecord,
)
from itemsmith.templates_bank.storage._summaries import refresh_summary

__all__ = ["VersionStatus", "cached_student_response", "cached_verdict", "list_reviews", "list_student_responses",
           "list_verdicts", "record_review", "record_student_response", "record_verdict", "releasable_versions",
           "version_statuses"]

VersionStatus = Literal["approved", "rejected", "accepted", "declined", "pending"]
_STAGE_OF = {record_type: stage for stage, record_type in STAGE_RECORDS.items()}
_SUMMARIZED_STAGES = ("decision", "judge", "irt")


def _check_version(session: Session, version_id: int) -> None:
    if session.get(TemplateVersionRow, version_id) is None:
        raise NotFoundError(f"no template version with id {version_id}")


def record_verdict(session: Session, version_id: int, record: VerdictRecord, *, model: str | None = None,
                   prompt_hash: str | None = None, item_hash: str | None = None,
                   run_id: str | None = None) -> VerdictPublic:
    """Store one typed verdict; its stage follows from its type. A `JudgeScore`'s model defaults
    to its judge."""
    _check_version(session, version_id)
    if model is None and isinstance(record, JudgeScore):
        model = record.judge
    row = VerdictRow(template_version_id=version_id, stage=_STAGE_OF[type(record)],
                     payload=record.model_dump(mode="json"), model=model, prompt_hash=prompt_hash,
                     item_hash=item_hash, run_id=run_id)
    session.add(row)
    session.flush()
    if row.stage in _SUMMARIZED_STAGES:
        refresh_summary(session, version_id)
    return VerdictPublic.model_validate(row)


def record_student_response(session: Session, version_id: int, response: StudentResponse, *, item_hash: str,
                            prompt_hash: str | None = None, run_id: str | None = None) -> StudentResponsePublic:
    """Store one student's answer to one item (the student's name is the cache's model key)."""
    _check_version(session, version_id)
    row = StudentResponseRow(template_version_id=version_id, model=response.student, rank=response.rank,
                             item_index=response.item_index, item_hash=item_hash, prompt_hash=prompt_hash,
                             blind=response.blind, raw=response.raw, choice=response.choice,
                             correct=response.correct, run_id=run_id)
    session.add(row)
    session.flush()
    return StudentResponsePublic.model_validate(row)


def record_review(session: Session, version_id: int, review: ReviewCreate) -> ReviewPublic:
    _check_version(session, version_id)
    row = ReviewDecisionRow(template_version_id=version_id, **review.model_dump())
    session.add(row)
    session.flush()
    refresh_summary(session, version_id)
    return ReviewPublic.model_validate(row)


def list_verdicts(session: Session, version_id: int, stage: Stage | None = None) -> list[VerdictPublic]:
    query = select(VerdictRow).where(VerdictRow.template_version_id == version_id)
    if stage is not None:
        query = query.where(VerdictRow.stage == stage)
    return [VerdictPublic.model_validate(r) for r in session.scalars(query.order_by(VerdictRow.id))]


def list_student_responses(session: Session, version_id: int | None = None, *, model: str | None = None,
                           item_hash: str | None = None) -> list[StudentResponsePublic]:
    """Responses filtered by version, student and item (any combination), oldest first."""
    query = select(StudentResponseRow)
    for column, value in ((StudentResponseRow.template_version_id, version_id), (StudentResponseRow.model, model),
                          (StudentResponseRow.item_hash, item_hash)):
        if value is not None:
            query = query.where(column == value)
    return [StudentResponsePublic.model_validate(r) for r in session.scalars(query.order_by(StudentResponseRow.id))]


def list_reviews(session: Session, version_id: int) -> list[ReviewPublic]:
    query = select(ReviewDecisionRow).where(ReviewDecisionRow.template_version_id == version_id)
    return [ReviewPublic.model_validate(r) for r in session.scalars(query.order_by(ReviewDecisionRow.id))]


def cached_verdict(session: Session, stage: Stage, *, model: str, prompt_hash: str,
                   item_hash: str) -> VerdictPublic | None:
    """The newest verdict of this stage from this model on this prompt and item, if any."""
    row = session.scalar(select(VerdictRow).where(
        VerdictRow.stage == stage, VerdictRow.model == model, VerdictRow.prompt_hash == prompt_hash,
        VerdictRow.item_hash == item_hash).order_by(VerdictRow.id.desc()).limit(1))
    return None if row is None else VerdictPublic.model_validate(row)


def cached_student_response(session: Session, *, model: str, prompt_hash: str,
                            item_hash: str) -> StudentResponsePublic | None:
    """The newest answer of this student to this prompt and item, if any."""
    row = session.scalar(select(StudentResponseRow).where(
        StudentResponseRow.model == model, StudentResponseRow.prompt_hash == prompt_hash,
        StudentResponseRow.item_hash == item_hash).order_by(StudentResponseRow.id.desc()).limit(1))
    return None if row is None else StudentResponsePublic.model_validate(row)


def version_statuses(session: Session, bank_id: int) -> dict[int, VersionStatus]:
    """Each version's status: a person's latest review wins (``approved``/``rejected``); without
    one, the pipeline's latest `Decision` (``accepted``/``declined``); else ``pending``."""
    versions = select(TemplateVersionRow.id).where(TemplateVersionRow.bank_id == bank_id)
    ids = session.scalars(versions.order_by(TemplateVersionRow.id))
    statuses: dict[int, VersionStatus] = dict.fromkeys(ids, "pending")
    decisions = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                                .where(VerdictRow.template_version_id.in_(versions), VerdictRow.stage == "decision")
                                .order_by(VerdictRow.id))
    for version_id, payload in decisions:
        statuses[version_id] = "accepted" if payload.get("accepted") else "declined"
    reviews = session.execute(select(ReviewDecisionRow.template_version_id, ReviewDecisionRow.decision)
                              .where(ReviewDecisionRow.template_version_id.in_(versions))
                              .order_by(ReviewDecisionRow.id))
    for version_id, decision in reviews:
        statuses[version_id] = "approved" if decision == "approve" else "rejected"
    return statuses


def releasable_versions(session: Session, bank_id: int) -> list[TemplateVersionPublic]:
    """Per template, its newest ``approved`` or ``accepted`` version; templates in the order
    they entered the bank."""
    statuses = version_statuses(session, bank_id)
    rows = session.scalars(select(TemplateVersionRow).where(TemplateVersionRow.bank_id == bank_id)
                           .order_by(TemplateVersionRow.id))
    first_seen: dict[str, int] = {}
    newest: dict[str, TemplateVersionRow] = {}
    for row in rows:
        first_seen.setdefault(row.template_key, row.id)
        if statuses[row.id] in ("approved", "accepted"):
            newest[row.template_key] = row
    return [TemplateVersionPublic.model_validate(newest[key]) for key in sorted(newest, key=first_seen.__getitem__)]
