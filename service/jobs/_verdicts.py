"""Storing one verification of a template version: the structure report, the item audit's report,
every content stage's typed verdicts, the decision. Once per job: a job that runs again after a crash finds its
verdicts (keyed by the job id as run id) and stores nothing twice."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from itemsmith.agents.stages.rederivation import SOLVER_PROMPT_VERSION
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.items.hashing import item_hash
from itemsmith.items.schema import Decision, RederivationReport, StructureReport, Template
from itemsmith.templates_bank.storage import (
    TemplateVersionPublic,
    VerdictRow,
    add_template_version,
    find_version,
    get_version,
    list_verdicts,
    record_student_response,
    record_verdict,
)

__all__ = ["record_verification", "recorded_by", "store_accepted", "stored_programs"]


def stored_programs(session: Session, version_id: int, *, prompt_version: str = SOLVER_PROMPT_VERSION
                    ) -> dict[str, str]:
    """The newest re-derivation program stored on the version (written under `prompt_version`'s
    prompt), keyed by the version's content hash; empty when there is none."""
    for verdict in reversed(list_verdicts(session, version_id, "rederivation")):
        record = verdict.record
        if verdict.prompt_hash == prompt_version and isinstance(record, RederivationReport) and record.program:
            return {get_version(session, version_id).content_hash: record.program}
    return {}


def recorded_by(session: Session, version_id: int, run_id: str) -> bool:
    """Whether the run already stored verdicts on the version."""
    query = select(VerdictRow.id).where(VerdictRow.template_version_id == version_id, VerdictRow.run_id == run_id)
    return session.scalar(query.limit(1)) is not None


def record_verification(session: Session, version_id: int, *, structure: StructureReport,
                        results: Sequence[VerificationResult], decision: Decision, run_id: str) -> bool:
    """Store the verdicts unless the run stored them already; returns whether it stored them.
    Student responses are keyed by the hash of the item they answered: the fresh-seed review items
    a stage (the item audit) drew for the later stages, else the structure report's items."""
    if recorded_by(session, version_id, run_id):
        return False
    record_verdict(session, version_id, structure, run_id=run_id)
    shown = structure.items
    for result in results:
        if result.audit is not None:
            record_verdict(session, version_id, result.audit, run_id=run_id)
        if result.rederivation is not None:  # the program is kept: a recheck of the version reuses it
            record_verdict(session, version_id, result.rederivation, model=result.rederivation.solver,
                           prompt_hash=SOLVER_PROMPT_VERSION, run_id=run_id)
        for score in result.judgement.scores if result.judgement is not None else []:
            record_verdict(session, version_id, score, run_id=run_id)
        for response in result.students.responses if result.students is not None else []:
            if not 0 <= response.item_index < len(shown):
                raise ValueError(f"a student answered item {response.item_index}, but version {version_id} "
                                 f"was shown {len(shown)} items")
            answered = shown[response.item_index]
            record_student_response(session, version_id, response, item_hash=item_hash(answered), run_id=run_id)
        if result.capability is not None:
            record_verdict(session, version_id, result.capability.verdict, run_id=run_id)
        shown = result.review_items or shown
    record_verdict(session, version_id, decision, run_id=run_id)
    return True


def store_accepted(session: Session, bank_id: int, template: Template, *, structure: StructureReport,
                   results: Sequence[VerificationResult], decision: Decision, run_id: str,
                   created_by: str) -> tuple[TemplateVersionPublic, bool]:
    """The accepted template's version in the bank (added unless its source is there) with the
    run's verdicts (`record_verification`); returns it and whether this call stored the verdicts.
    What every entry point that turns a run into a bank uses (the author job, the CLI)."""
    version = find_version(session, bank_id, template.content_hash)
    if version is None:
        try:
            with session.begin_nested():
                version = add_template_version(session, bank_id, template, created_by=created_by)
        except IntegrityError:  # stored by another job a moment ago
            version = find_version(session, bank_id, template.content_hash)
            assert version is not None
    stored = record_verification(session, version.id, structure=structure, results=results, decision=decision,
                                 run_id=run_id)
    return version, stored
