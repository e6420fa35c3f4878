"""Storing one verification of a template version: the structure report, every content stage's
typed verdicts, the decision. Once per job: a job that runs again after a crash finds its
verdicts (keyed by the job id as run id) and stores nothing twice."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.agents.verify import VerificationResult
from itemsmith.templates_bank.items.hashing import item_hash
from itemsmith.templates_bank.items.schema import Decision, StructureReport
from itemsmith.templates_bank.storage import record_student_response, record_verdict
from itemsmith.templates_bank.storage._models import VerdictRow

__all__ = ["record_verification", "recorded_by"]


def recorded_by(session: Session, version_id: int, run_id: str) -> bool:
    """Whether the run already stored verdicts on the version."""
    query = select(VerdictRow.id).where(VerdictRow.template_version_id == version_id, VerdictRow.run_id == run_id)
    return session.scalar(query.limit(1)) is not None


def record_verification(session: Session, version_id: int, *, structure: StructureReport,
                        results: Sequence[VerificationResult], decision: Decision, run_id: str) -> bool:
    """Store the verdicts unless the run stored them already; returns whether it stored them.
    Student responses are keyed by the hash of the structure report's item they answered."""
    if recorded_by(session, version_id, run_id):
        return False
    record_verdict(session, version_id, structure, run_id=run_id)
    for result in results:
        for score in result.judgement.scores if result.judgement is not None else []:
            record_verdict(session, version_id, score, run_id=run_id)
        for response in result.students.responses if result.students is not None else []:
            if not 0 <= response.item_index < len(structure.items):
                raise ValueError(f"a student answered item {response.item_index}, but the structure check of "
                                 f"version {version_id} sampled {len(structure.items)} items")
            answered = structure.items[response.item_index]
            record_student_response(session, version_id, response, item_hash=item_hash(answered), run_id=run_id)
        if result.capability is not None:
            record_verdict(session, version_id, result.capability.verdict, run_id=run_id)
    record_verdict(session, version_id, decision, run_id=run_id)
    return True
