"""Re-verification: a release judged again by a new panel (and, optionally, answered by a new
student pool), with the new verdicts stored beside the old ones and the difference reported.

Each template version's items, as the release stored them (checked against the manifest's
hashes), make one `TemplateSample`, with the release's task and the handler's own
description (read in the sandbox, as templates see it).

Answers are cached in the bank. A judge score is keyed by (judge name, prompt hash, items hash):
the prompt hash covers the messages and how the score is drawn (log-probabilities, samples,
retries), the items hash the items the prompt shows. A student answer is keyed by (student name,
prompt hash, item hash); an evaluation of the same model on the version answered the same prompt
(``evaluation_responses``), so its answers serve too. A stored answer under the same key is
reused without calling the model, so re-verifying with the same models, prompts and items (or
with students evaluated on the release) makes no model call. A judge's or a student's name is
its identity in the cache: name them by their model spec (the CLI does). Students answer with
the series only: the report compares with-series accuracies (the blind condition is the
authoring pool's check), so a blind answer would be paid for and never read.

Stored with the run id: every fresh judge score and student response (a cached one only when it
was recorded on another version, so each version keeps its own), and per template the new
panel's `Decision` (stage ``judges``). That decision counts like any pipeline decision: a version
no person has reviewed is declined for the next release when the new panel rejects it.

The old panel is the judge scores recorded on the version up to the release's creation (the
latest per judge and criterion), decided under the same `PanelConfig` as the new one, so only the
panel differs. Old student accuracies are the with-series responses recorded up to the release.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import groupby
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, computed_field
from sqlalchemy.orm import Session

from itemsmith.items.hashing import canonical_json, item_hash, sha256_hex
from itemsmith.items.schema import Decision, JudgeScore, StudentResponse
from itemsmith.sandbox import SandboxLimits, run_template
from itemsmith.templates_bank.handler_identity import (
    STATIC_HANDLER_PREFIX,
    handler_label,
    is_static_handler,
    redact_handler_paths,
)
from itemsmith.templates_bank.regeneration import RegenerationError
from itemsmith.templates_bank.releases import Release
from itemsmith.templates_bank.storage import (
    BankPublic,
    BankRow,
    NotFoundError,
    cached_evaluation_response,
    cached_student_response,
    cached_verdict,
    find_version,
    get_bank,
    list_student_responses,
    list_verdicts,
    record_student_response,
    record_verdict,
)
from itemsmith.verification.agreement import krippendorff_alpha_interval
from itemsmith.verification.judges import (
    Criterion,
    Judge,
    JudgeCall,
    PanelConfig,
    TemplateJudgement,
    ajudge_template,
    judgement_from_scores,
)
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import PoolConfig, Student, StudentCall, StudentReport, aanswer_template

__all__ = ["CallCounts", "Change", "CriterionShift", "ReverificationReport", "StudentShift", "TemplateDiff",
           "areverify_release", "judge_cache_key", "new_reverification_id", "reverify_release",
           "student_cache_key"]

# errored: the new panel's calls gave no usable reply, so it has no verdict (none is stored; a rerun asks again)
Change = Literal["now_rejected", "now_accepted", "unchanged", "no_old_panel", "errored"]
_MAX_NAME = 200  # the bank's model column
_DESCRIPTION_TEMPLATE = '''
def question(num_samples):
    return [{"question": "description", "options": ["a", "b"], "answer_index": 0,
             "metadata": {"description": str(handler.description)}}]
'''


# --- the report -----------------------------------------------------------------------------


class CriterionShift(BaseModel):
    """One criterion's mean score under the old and the new panel."""

    criterion: Criterion
    old_mean: float | None
    new_mean: float | None
    shift: float | None = Field(description="new mean - old mean; None unless both panels scored it")


class StudentShift(BaseModel):
    """One student's accuracy on a template's items (with the series), before and now."""

    student: str
    old_accuracy: float | None = Field(description="on the items answered up to the release; None: none")
    new_accuracy: float
    n_items: int


class TemplateDiff(BaseModel):
    """One template version: the old and the new panel's decision and scores."""

    template_id: str
    version: str = Field(description="sha256 of the template's source")
    old_decision: Decision | None = Field(description="None: no judge scores on record before the release")
    new_decision: Decision
    change: Change
    criteria: list[CriterionShift]
    students: list[StudentShift] = Field(default_factory=list)


class CallCounts(BaseModel):
    """Model calls of one stage: made now, and answers drawn fresh or reused from the bank."""

    calls: int = Field(0, description="model calls made (samples and retries of malformed replies included)")
    fresh: int = Field(0, description="answers drawn from a model in this run")
    cached: int = Field(0, description="answers reused from the bank: no model call")


class ReverificationReport(BaseModel):
    """What a new panel changes about a release."""

    release: str
    run_id: str
    judges: list[str]
    students: list[str]
    templates: list[TemplateDiff]
    criteria: list[CriterionShift] = Field(description="means over the templates both panels scored on it")
    agreement: float | None = Field(description="Krippendorff's alpha (interval), old vs new panel, over "
                                                "per-template per-criterion mean scores")
    judge_calls: CallCounts
    student_calls: CallCounts | None
    advisory: bool = Field(False, description="no judge of the new panel is validated: its decisions are reported "
                                              "and recorded as notes, and change no version's status")
    usage: dict[str, float | int | None] = Field(
        default_factory=dict, description="the calls by outcome (answered, cut, failed), their tokens (cached and "
                                          "cache writes apart) and cost, from the caller that metered them")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def errored(self) -> list[str]:
        """Templates without a new verdict: the panel's calls failed (rerun with the same run id)."""
        return [t.template_id for t in self.templates if t.change == "errored"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def now_rejected(self) -> list[str]:
        return [] if self.advisory else [t.template_id for t in self.templates if t.change == "now_rejected"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def now_accepted(self) -> list[str]:
        return [] if self.advisory else [t.template_id for t in self.templates if t.change == "now_accepted"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def model_calls(self) -> int:
        return self.judge_calls.calls + (self.student_calls.calls if self.student_calls else 0)


# --- cache keys -----------------------------------------------------------------------------


def judge_cache_key(call: JudgeCall) -> tuple[str, str]:
    """(prompt hash, items hash) of a judge call."""
    messages = [{"role": m.type, "content": m.content} for m in call.messages]
    scoring = call.judge.model_dump(mode="json", exclude={"name", "family"})
    prompt = sha256_hex(canonical_json({"messages": messages, "scoring": scoring}))
    return prompt, sha256_hex(canonical_json([item_hash(item) for item in call.items]))


def student_cache_key(call: StudentCall) -> tuple[str, str]:
    """(prompt hash, item hash) of a student call."""
    prompt = sha256_hex(canonical_json({"mode": call.mode, "vision": call.student.vision, "prompt": call.prompt}))
    return prompt, item_hash(call.item)


def _stored(session: Session, commit: bool) -> None:
    if commit:
        session.commit()


@dataclass
class _JudgeCache:
    """`ScoreCache` on the bank's verdicts, counting what it serves and stores; with `commit`, each
    stored score is committed at once (a write holds SQLite's one write lock only that long, not
    across the model calls still to come)."""

    session: Session
    versions: dict[str, int]
    run_id: str
    counts: CallCounts
    commit: bool = False

    def get(self, call: JudgeCall) -> JudgeScore | None:
        prompt, items = judge_cache_key(call)
        hit = cached_verdict(self.session, "judge", model=call.judge.name, prompt_hash=prompt, item_hash=items)
        if hit is None:
            return None
        score = JudgeScore.model_validate(hit.payload)
        version_id = self.versions[call.template_id]
        if hit.template_version_id != version_id:
            record_verdict(self.session, version_id, score, model=call.judge.name, prompt_hash=prompt,
                           item_hash=items, run_id=self.run_id)
            _stored(self.session, self.commit)
        self.counts.cached += 1
        return score

    def put(self, call: JudgeCall, score: JudgeScore) -> None:
        prompt, items = judge_cache_key(call)
        record_verdict(self.session, self.versions[call.template_id], score, model=call.judge.name,
                       prompt_hash=prompt, item_hash=items, run_id=self.run_id)
        _stored(self.session, self.commit)
        self.counts.fresh += 1
        self.counts.calls += score.attempts


@dataclass
class _StudentCache:
    """`AnswerCache` on the bank's student responses, counting what it serves and stores (each
    committed at once with `commit`, as `_JudgeCache`)."""

    session: Session
    versions: dict[str, int]
    run_id: str
    counts: CallCounts
    commit: bool = False

    def get(self, call: StudentCall) -> StudentResponse | None:
        prompt, item = student_cache_key(call)
        version_id = self.versions[call.template_id]
        hit = (cached_student_response(self.session, model=call.student.name, prompt_hash=prompt, item_hash=item)
               or cached_evaluation_response(self.session, version_id, model=call.student.name, prompt_hash=prompt,
                                             item_hash=item))
        if hit is None:
            return None
        response = StudentResponse(student=call.student.name, rank=call.student.rank, item_index=call.item_index,
                                   blind=call.blind, raw=hit.raw, choice=hit.choice,
                                   correct=hit.choice == call.item.answer_index)
        if hit.template_version_id != version_id:
            record_student_response(self.session, version_id, response, item_hash=item, prompt_hash=prompt,
                                    run_id=self.run_id)
            _stored(self.session, self.commit)
        self.counts.cached += 1
        return response

    def put(self, call: StudentCall, response: StudentResponse) -> None:
        prompt, item = student_cache_key(call)
        record_student_response(self.session, self.versions[call.template_id], response, item_hash=item,
                                prompt_hash=prompt, run_id=self.run_id)
        _stored(self.session, self.commit)
        self.counts.fresh += 1
        self.counts.calls += 1


# --- comparing the panels -------------------------------------------------------------------


def _old_judgement(session: Session, version_id: int, template_id: str, before: datetime,
                   config: PanelConfig) -> TemplateJudgement | None:
    latest: dict[tuple[str, str], JudgeScore] = {}
    for verdict in list_verdicts(session, version_id, "judge"):
        score = JudgeScore.model_validate(verdict.payload)
        if verdict.created_at <= before and score.criterion in config.criteria:
            latest[(score.judge, score.criterion)] = score
    return judgement_from_scores(template_id, list(latest.values()), config) if latest else None


def _means(judgement: TemplateJudgement | None) -> dict[str, float | None]:
    return {} if judgement is None else {a.criterion: a.mean for a in judgement.aggregates}


def _change(old: TemplateJudgement | None, new: TemplateJudgement) -> Change:
    if not new.passed and new.failed_calls:
        return "errored"
    if old is None:
        return "no_old_panel"
    if old.passed == new.passed:
        return "unchanged"
    return "now_accepted" if new.passed else "now_rejected"


def _shift(criterion: Criterion, old: float | None, new: float | None) -> CriterionShift:
    return CriterionShift(criterion=criterion, old_mean=old, new_mean=new,
                          shift=None if old is None or new is None else new - old)


def _student_shifts(session: Session, version_id: int, before: datetime, report: StudentReport) -> list[StudentShift]:
    old: dict[str, list[bool]] = {}
    for response in list_student_responses(session, version_id):
        if response.created_at <= before and not response.blind:
            old.setdefault(response.model, []).append(response.correct)
    return [StudentShift(student=student, old_accuracy=float(np.mean(old[student])) if student in old else None,
                         new_accuracy=accuracy, n_items=report.n_items)
            for student, accuracy in report.accuracies().items()]


def _overall(criteria: Sequence[Criterion], templates: Sequence[TemplateDiff]) -> list[CriterionShift]:
    out = []
    for criterion in criteria:
        pairs = [(c.old_mean, c.new_mean) for t in templates for c in t.criteria
                 if c.criterion == criterion and c.shift is not None]
        old = float(np.mean([p[0] for p in pairs])) if pairs else None
        new = float(np.mean([p[1] for p in pairs])) if pairs else None
        out.append(_shift(criterion, old, new))
    return out


def _agreement(templates: Sequence[TemplateDiff]) -> float | None:
    units = [c for t in templates for c in t.criteria]
    matrix = [[np.nan if c.old_mean is None else c.old_mean for c in units],
              [np.nan if c.new_mean is None else c.new_mean for c in units]]
    return krippendorff_alpha_interval(np.array(matrix, dtype=float).reshape(2, len(units)))


# --- the run --------------------------------------------------------------------------------


def new_reverification_id() -> str:
    return f"reverify-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


def _check_names(kind: str, names: list[str]) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{kind} names must be unique, got {names}")
    long = [n for n in names if len(n) > _MAX_NAME]
    if long:
        raise ValueError(f"{kind} names are stored as the cache's model key, at most {_MAX_NAME} characters: {long}")


def _handler_description(handler: str, limits: SandboxLimits | None) -> str:
    """The handler's description as templates see it (read in the sandbox: a handler file is
    never executed in this process). A bank of imported items has no handler: its items carry
    their series."""
    if is_static_handler(handler):
        return (f"items imported from an existing benchmark ({handler.removeprefix(STATIC_HANDLER_PREFIX)}); "
                "each item carries its own series, without timestamps or units unless the benchmark gave them")
    result = run_template(_DESCRIPTION_TEMPLATE, handler, num_samples=1, seed=0, limits=limits)
    if not result.ok:
        raise RegenerationError(redact_handler_paths(
            f"handler {handler_label(handler)}: {result.status.value}: {result.error}", handler))
    return str(result.items[0]["metadata"]["description"])


def _versions(session: Session, release: Release) -> dict[str, int]:
    manifest = release.manifest
    bank = (get_bank(session, manifest.bank) if release.bank_id is None
            else BankPublic.model_validate(session.get_one(BankRow, release.bank_id)))
    versions: dict[str, int] = {}
    for entry in manifest.templates:
        version = find_version(session, bank.id, entry.version)
        if version is None:
            raise NotFoundError(f"{manifest.ref}: version {entry.version[:12]} of template {entry.template_id!r} "
                                f"is not in bank {bank.name!r}")
        versions[entry.template_id] = version.id
    return versions


async def areverify_release(session: Session, release: Release, judges: Sequence[Judge], *,
                            panel_config: PanelConfig | None = None, students: Sequence[Student] = (),
                            pool_config: PoolConfig | None = None, run_id: str | None = None, workers: int = 1,
                            limits: SandboxLimits | None = None, commit: bool = False,
                            advisory: bool = False) -> ReverificationReport:
    """Judge every template of ``release`` with ``judges`` (and have ``students`` answer its items),
    reusing cached answers, store the new verdicts and report the difference to the old panel.
    An `advisory` panel (no judge validated) stores its scores but no decision: it changes no
    version's status.

    Templates are done one after the other. With ``commit=True`` the session is committed after
    each stored answer and each template, so answers already paid for survive a later failure and
    no write waits on this run's model calls (the session must then not be inside a
    ``session.begin()`` block); otherwise the caller commits. Raises `NotFoundError`
    (a version is not in the bank), `ReleaseIntegrityError` / `RegenerationError` (items differ
    or a run failed), `ValueError` (bad panel or pool); a model's own errors propagate.
    """
    config = panel_config or PanelConfig()
    pool_config = pool_config or PoolConfig(blind=False)
    if not judges:
        raise ValueError("the new panel has no judges")
    _check_names("judge", [j.config.name for j in judges])
    _check_names("student", [s.config.name for s in students])
    manifest = release.manifest
    versions = _versions(session, release)
    run_id = run_id or new_reverification_id()
    dataset = _handler_description(release.local_bank_handler(), limits)
    judge_cache = _JudgeCache(session, versions, run_id, CallCounts(), commit=commit)
    student_cache = _StudentCache(session, versions, run_id, CallCounts(), commit=commit) if students else None
    diffs: list[TemplateDiff] = []
    for template_id, group in groupby(release.items(workers=workers, limits=limits), key=lambda p: p[0].template_id):
        runs = list(group)  # the whole group: the release has checked these items against its hash
        items = [item for _, run in runs for item in run.items]
        if not items:
            raise ValueError(f"{manifest.ref}: template {template_id!r} generated no items to judge")
        sample = TemplateSample(template_id=template_id, items=items, task=manifest.task, dataset=dataset)
        version_id = versions[template_id]
        new = await ajudge_template(sample, judges, config, cache=judge_cache)
        errored = not new.passed and bool(new.failed_calls)  # no verdict: nothing recorded as a rejection
        if not errored and not advisory and not any(v.run_id == run_id
                                                    for v in list_verdicts(session, version_id, "decision")):
            record_verdict(session, version_id, new.decision, run_id=run_id)  # once per run, also when resumed
        old = _old_judgement(session, version_id, template_id, manifest.created_at, config)
        old_means, new_means = _means(old), _means(new)
        shifts = []
        if student_cache is not None:
            answered = await aanswer_template(sample, students, pool_config, cache=student_cache)
            shifts = _student_shifts(session, version_id, manifest.created_at, answered)
        diffs.append(TemplateDiff(template_id=template_id, version=runs[0][0].version,
                                  old_decision=old.decision if old else None, new_decision=new.decision,
                                  change=_change(old, new), students=shifts,
                                  criteria=[_shift(c, old_means.get(c), new_means[c]) for c in config.criteria]))
        if commit:
            session.commit()
    return ReverificationReport(release=manifest.ref, run_id=run_id, judges=[j.config.name for j in judges],
                                students=[s.config.name for s in students], templates=diffs,
                                criteria=_overall(config.criteria, diffs), agreement=_agreement(diffs),
                                judge_calls=judge_cache.counts,
                                student_calls=student_cache.counts if student_cache else None)


def reverify_release(session: Session, release: Release, judges: Sequence[Judge], *,
                     panel_config: PanelConfig | None = None, students: Sequence[Student] = (),
                     pool_config: PoolConfig | None = None, run_id: str | None = None, workers: int = 1,
                     limits: SandboxLimits | None = None, commit: bool = False,
                     advisory: bool = False) -> ReverificationReport:
    """Synchronous `areverify_release` (not from inside a running event loop)."""
    return asyncio.run(areverify_release(session, release, judges, panel_config=panel_config, students=students,
                                         pool_config=pool_config, run_id=run_id, workers=workers, limits=limits,
                                         commit=commit, advisory=advisory))
