"""Per-version summaries for the review listing, maintained on write.

A ``template_summaries`` row per template version holds what the listing filters and shows:
whether it is its template's newest version, its status (a person's latest review wins, else the
pipeline's latest decision, else ``pending``), the stage of the pipeline's latest decision, the
mean judge score of the latest panel (the judge verdicts of the newest run that recorded any), the latest IRT parameters and pipeline decision. `record_verdict`,
`record_review` and `add_template_version` refresh the row in their own transaction, reading only
that version's verdicts, so the listing never aggregates over the bank. ``template_summary_counts``
keeps, per bank, how many summaries share each (newest?, status, category, decision stage), moved
in the same transaction, so the listing's total needs no count over the bank either (except with a
judge-score filter). Migration 0003 backfills both for existing banks.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from sqlalchemy import and_, func, select, update
from sqlalchemy.orm import Session

from itemsmith.templates_bank.storage._models import (
    ReviewDecisionRow,
    TemplateSummaryCountRow,
    TemplateSummaryRow,
    TemplateVersionRow,
    VerdictRow,
)
from itemsmith.templates_bank.storage._types import conflict_insert

__all__ = ["CountKey", "count_key", "judge_panels", "refresh_summary", "summary_on_new_version"]

CountKey = tuple[int, bool, str, str, str]  # bank, newest?, status, category, decision stage ('' for none)


@cache
def _count_upsert(dialect: str) -> tuple[Any, Any]:
    """The counter's insert and its ``excluded.count`` for a dialect, built once (building them is
    most of a bump)."""
    insert = conflict_insert(dialect)(TemplateSummaryCountRow)
    return insert, insert.excluded.count


def count_key(bank_id: int, is_latest: bool, status: str, category: str, stage: str | None) -> CountKey:
    return (bank_id, bool(is_latest), status, category, stage or "")


def _bump(session: Session, changes: dict[CountKey, int]) -> None:
    """Add each delta to its counter (creating it), in key order (concurrent writers lock alike)."""
    insert, excluded = _count_upsert(session.get_bind().dialect.name)
    for key in sorted(k for k, delta in changes.items() if delta):
        bank_id, is_latest, status, category, stage = key
        statement = insert.values(bank_id=bank_id, is_latest=is_latest, status=status, category=category,
                                  decision_stage=stage, count=changes[key])
        session.execute(statement.on_conflict_do_update(
            index_elements=["bank_id", "is_latest", "status", "category", "decision_stage"],
            set_={"count": TemplateSummaryCountRow.count + excluded}))


def _key_of(row: Any) -> CountKey:
    return count_key(row.bank_id, row.is_latest, row.status, row.category, row.decision_stage)

SummaryStatus = Literal["approved", "rejected", "accepted", "declined", "pending"]


def _latest_payload(session: Session, version_id: int, stage: str) -> dict[str, Any] | None:
    return session.scalar(select(VerdictRow.payload).where(VerdictRow.template_version_id == version_id,
                                                           VerdictRow.stage == stage)
                          .order_by(VerdictRow.id.desc()).limit(1))


def judge_panels(session: Session, version_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Per version, the mean score of each judge panel that scored it, oldest panel first (a panel:
    the judge verdicts of one run; verdicts without a run form one panel)."""
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.run_id, VerdictRow.payload,
                                  VerdictRow.model, VerdictRow.id, VerdictRow.created_at)
                           .where(VerdictRow.template_version_id.in_(version_ids), VerdictRow.stage == "judge")
                           .order_by(VerdictRow.id))
    panels: dict[int, dict[str | None, dict[str, Any]]] = {}
    for version_id, run_id, payload, model, verdict_id, created_at in rows:
        panel = panels.setdefault(version_id, {}).setdefault(run_id, {"run_id": run_id, "scores": [], "judges": set()})
        panel["created_at"], panel["last_id"] = created_at, verdict_id
        if payload.get("score") is not None:
            panel["scores"].append(float(payload["score"]))
        if model:
            panel["judges"].add(model)
    out: dict[int, list[dict[str, Any]]] = {}
    for version_id, by_run in panels.items():
        ordered = sorted(by_run.values(), key=lambda p: p["last_id"])  # the newest panel: the newest verdict
        out[version_id] = [{"run_id": p["run_id"], "created_at": p["created_at"], "judges": sorted(p["judges"]),
                            "score": round(sum(p["scores"]) / len(p["scores"]), 3) if p["scores"] else None}
                           for p in ordered]
    return out


def _latest_panel_score(session: Session, version_id: int) -> tuple[float | None, str | None]:
    newest = session.execute(select(VerdictRow.run_id).where(VerdictRow.template_version_id == version_id,
                                                             VerdictRow.stage == "judge")
                             .order_by(VerdictRow.id.desc()).limit(1)).first()
    if newest is None:
        return None, None
    run_id = newest[0]
    same_run = VerdictRow.run_id.is_(None) if run_id is None else VerdictRow.run_id == run_id
    score = session.scalar(select(func.avg(VerdictRow.payload["score"].as_float()))
                           .where(VerdictRow.template_version_id == version_id, VerdictRow.stage == "judge", same_run))
    return (None if score is None else round(float(score), 3)), run_id


def _summary_values(session: Session, version_id: int) -> dict[str, Any]:
    review = session.scalar(select(ReviewDecisionRow.decision).where(ReviewDecisionRow.template_version_id == version_id)
                            .order_by(ReviewDecisionRow.id.desc()).limit(1))
    decision = _latest_payload(session, version_id, "decision")
    status: SummaryStatus
    if review is not None:
        status = "approved" if review == "approve" else "rejected"
    elif decision is not None:
        status = "accepted" if decision.get("accepted") else "declined"
    else:
        status = "pending"
    stage = (decision or {}).get("stage")
    score, judge_run = _latest_panel_score(session, version_id)
    return {"status": status, "decision_stage": stage, "judge_score": score, "judge_run": judge_run,
            "irt": _latest_payload(session, version_id, "irt"), "decision": decision}


def _current(session: Session, version_id: int) -> Any:
    return session.execute(select(TemplateSummaryRow.bank_id, TemplateSummaryRow.is_latest, TemplateSummaryRow.status,
                                  TemplateSummaryRow.category, TemplateSummaryRow.decision_stage)
                           .where(TemplateSummaryRow.version_id == version_id).with_for_update()).first()


def refresh_summary(session: Session, version_id: int) -> None:
    """Recompute the version's summary from its own verdicts and reviews, and move its count
    (same transaction)."""
    before = _current(session, version_id)
    if before is None:  # a version stored before the summaries existed and not backfilled
        summary_on_new_version(session, session.get_one(TemplateVersionRow, version_id))
        before = _current(session, version_id)
    values = _summary_values(session, version_id)
    session.execute(update(TemplateSummaryRow).where(TemplateSummaryRow.version_id == version_id)
                    .values(**values).execution_options(synchronize_session=False))
    old = _key_of(before)
    new = count_key(before.bank_id, before.is_latest, values["status"], before.category, values["decision_stage"])
    if old != new:
        _bump(session, {old: -1, new: 1})


def summary_on_new_version(session: Session, row: TemplateVersionRow) -> None:
    """The new version's summary (pending, its template's newest); older versions of its
    template are no longer the newest."""
    superseded = session.execute(
        update(TemplateSummaryRow)
        .where(and_(TemplateSummaryRow.bank_id == row.bank_id, TemplateSummaryRow.template_key == row.template_key,
                    TemplateSummaryRow.version_id < row.id, TemplateSummaryRow.is_latest.is_(True)))
        .values(is_latest=False)
        .returning(TemplateSummaryRow.bank_id, TemplateSummaryRow.status, TemplateSummaryRow.category,
                   TemplateSummaryRow.decision_stage)
        .execution_options(synchronize_session=False)).all()
    newer = session.scalar(select(TemplateVersionRow.id).where(
        TemplateVersionRow.bank_id == row.bank_id, TemplateVersionRow.template_key == row.template_key,
        TemplateVersionRow.id > row.id).limit(1))
    session.add(TemplateSummaryRow(version_id=row.id, bank_id=row.bank_id, template_key=row.template_key,
                                   category=row.category, is_latest=newer is None, status="pending"))
    session.flush()
    changes: dict[CountKey, int] = {}
    for old in superseded:
        for key, delta in ((count_key(old.bank_id, True, old.status, old.category, old.decision_stage), -1),
                           (count_key(old.bank_id, False, old.status, old.category, old.decision_stage), 1)):
            changes[key] = changes.get(key, 0) + delta
    new = count_key(row.bank_id, newer is None, "pending", row.category, None)
    changes[new] = changes.get(new, 0) + 1
    _bump(session, changes)
