"""The stages of the authoring loop after the structure check, as `Verifier`s: the item audit
(always, first, no LLM), then the judge panel and the student pool.

`verification` scores and decides; this module feeds it items drawn under a fresh seed (never the
structure check's), with models built by `agents.llm.factory`, and turns a rejection into
feedback the generator can act on:

- `ItemAuditVerifier`: blind solvers and item checks over a few hundred items drawn through the
  sandbox (`verification.audit`); a rejection names each shortcut and its fix. When it passes it
  draws the items the later stages read, under a fresh seed.

- `JudgePanelVerifier`: G-Eval judges score the sampled items per criterion
  (`verification.judges`); a rejection names each failing criterion with its scores, and the
  feedback quotes the lowest-scoring judges' rationales for those criteria.
- `StudentPoolVerifier`: students of declared capability answer the items with and without the
  series (`verification.students`), then the capability filter (`verification.capability`)
  decides; a rejection on expertise reversal or on the blind flag carries the statistic in its
  reasons and in the feedback. Local students answer at most as many items at once, over all the
  run's slots, as the machine's cores run their llama.cpp threads (`local_student_calls`).
- `SkippedStudents`: in place of an advisory ladder (`agents.stages.ladder_validation`), no model:
  it accepts with the reason, so every accepted template's decision says why no student answered.

A model call that fails for good (after the bounded retries of `agents.llm.inference.complete`), comes
back empty or is cut is recorded on the result (`errors`) and is missing data: a stage that could
not decide because of it ends `errored` (the slot stops, resumable; no feedback reaches the
generator), never as a rejection and never as a crash of the run. Every call is metered into the
stage's `usage`, answered, cut and failed apart.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import ClassVar

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.feedback import audit_feedback
from itemsmith.agents.llm.factory import (
    CallLog,
    JudgeModel,
    StudentModel,
    build_judges,
    build_solver,
    build_students,
)
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy
from itemsmith.agents.llm.providers import SpecPolicy
from itemsmith.agents.llm.spec import StudentSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.pipeline import Pipeline, resolve_pipeline
from itemsmith.agents.stages.rederivation import RederivationVerifier
from itemsmith.agents.stages.verify import Evidence, VerificationResult, Verifier, pass_through
from itemsmith.items.schema import Decision, Item, RunStatus, StructureReport
from itemsmith.sandbox import SandboxLimits, SandboxPool, run_template
from itemsmith.verification.audit import AuditConfig, audit_template
from itemsmith.verification.block_replay import REPLAY_SOLVER
from itemsmith.verification.capability import CapabilityConfig, CapabilityReport, Outcome, assess
from itemsmith.verification.judges import (
    CRITERIA,
    PanelConfig,
    TemplateJudgement,
    advisory_decision,
    ajudge_template,
)
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.seeds import fresh_seed
from itemsmith.verification.settings import VerificationSettings
from itemsmith.verification.students import PoolConfig, aanswer_template

RATIONALE_CHARS = 400
# a "rationale" that is only the score (terse judges reply just "Score: N")
_BARE_SCORE = re.compile(r"^\W*score\W*\d+(?:\.\d+)?(?:\s*/\s*10)?\W*$", re.IGNORECASE)


# --- the stages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemAuditVerifier:
    """The item audit as the first stage after the structure check (always on; thresholds from
    `AuditConfig`, i.e. ``ITEMSMITH_AUDIT_*``). Runs in `executor` (it blocks on the sandbox)."""

    label: ClassVar[str] = "auditing"  # the run's live progress while the stage runs

    handler: str
    pool: SandboxPool | None = None
    config: AuditConfig | None = None
    limits: SandboxLimits | None = None
    executor: Executor | None = None
    review_items: int = 20  # at least this many fresh items for the later stages (students answer each)

    def _review_items(self, source: str, count: int) -> tuple[int, list[Item], str | None]:
        seed = fresh_seed()
        if self.pool is not None:
            result = self.pool.run(source, num_samples=count, seed=seed, limits=self.limits)
        else:
            result = run_template(source, self.handler, num_samples=count, seed=seed, limits=self.limits)
        if result.status is not RunStatus.ok:
            return seed, [], f"drawing the review items with seed {seed} failed: {result.error}"
        return seed, [Item.model_validate(raw) for raw in result.items], None

    async def __call__(self, source: str, report: StructureReport) -> VerificationResult:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        audit = await loop.run_in_executor(self.executor, lambda: audit_template(
            source, self.handler, config=self.config or VerificationSettings().audit, pool=self.pool, limits=self.limits))
        if not audit.passed:
            return VerificationResult(decision=Decision(accepted=False, stage="audit", reasons=[audit.summary()]),
                                      feedback=audit_feedback(audit), audit=audit,
                                      elapsed_s=time.monotonic() - started)
        count = max(len(report.items), self.review_items)
        seed, items, error = await loop.run_in_executor(self.executor, lambda: self._review_items(source, count))
        if error is not None:
            return VerificationResult(decision=Decision(accepted=False, stage="audit", reasons=[error]),
                                      feedback=f"The template failed on a fresh seed: {error}", audit=audit,
                                      elapsed_s=time.monotonic() - started)
        reasons = [audit.summary()]
        if audit.thresholds_lowered:
            reasons.append(f"audit thresholds lowered: {', '.join(audit.thresholds_lowered)}")
        return VerificationResult(decision=Decision(accepted=True, stage="audit", reasons=reasons), audit=audit,
                                  review_items=items, review_seed=seed, elapsed_s=time.monotonic() - started)


def template_sample(source: str, report: StructureReport, *, task: str, dataset: str) -> TemplateSample:
    """The report's items as the content stages read them (id: hash of the source); after the item
    audit these are its fresh-seed review items, not the structure check's."""
    if not report.passed or not report.items:
        raise ValueError("content stages need a template that passed the structure check with items")
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]
    return TemplateSample(template_id=f"sha256:{digest}", items=report.items, task=task, dataset=dataset)


def judge_feedback(judgement: TemplateJudgement) -> str:
    """Each failing criterion: what it asks, the panel's numbers, the lowest judges' rationales."""
    lines = ["It runs, but the review panel rejected its questions:"]
    for aggregate in judgement.aggregates:
        if aggregate.passed:
            continue
        lines.append(f"- {aggregate.criterion.replace('_', ' ')}: {CRITERIA[aggregate.criterion].definition} "
                     f"({aggregate.reason})")
        scored = sorted((s for s in judgement.scores if s.criterion == aggregate.criterion and s.score is not None),
                        key=lambda s: s.score or 0)
        for score in scored[:2]:
            rationale = " ".join(_BARE_SCORE.sub("", score.rationale).split())
            if len(rationale) > RATIONALE_CHARS:
                rationale = rationale[:RATIONALE_CHARS] + "..."
            lines.append(f"  Judge {score.judge} gave {score.score:.1f}/10"
                         + (f": {rationale}" if rationale else " (no reason given)"))
    lines.append("Change the question text, the options or how the answer is computed so that these criteria hold.")
    return "\n".join(lines)


@dataclass(frozen=True)
class JudgePanelVerifier:
    """The judge panel as a stage of the authoring loop. The judges read the earlier stages'
    evidence (the re-derivation's finding) in their prompt. An `advisory` panel (no judge
    validated: `agents.stages.judge_validation`) decides nothing by its scores (`advisory_decision`): they
    are kept as a note and the later stages decide."""

    label: ClassVar[str] = "judging"  # the run's live progress while the stage runs
    reads_evidence: ClassVar[bool] = True

    judges: Sequence[JudgeModel]
    panel: PanelConfig
    task: str
    dataset: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    advisory: bool = False

    async def __call__(self, source: str, report: StructureReport, *,
                       evidence: Sequence[Evidence] = ()) -> VerificationResult:
        started = time.monotonic()
        log = CallLog()
        judges = [judge.bind(log, self.retry) for judge in self.judges]
        sample = template_sample(source, report, task=self.task, dataset=self.dataset).model_copy(
            update={"evidence": [e.text for e in evidence]})
        judgement = await ajudge_template(sample, judges, self.panel)
        errored = not judgement.passed and bool(judgement.failed_calls)
        decision = judgement.decision
        if errored:
            decision = Decision(accepted=False, stage="judges", reasons=[
                f"{len(judgement.failed_calls)} judge call(s) gave no usable reply: no verdict "
                f"({judgement.failed_calls[0].error})"])
        elif self.advisory:
            decision = advisory_decision(judgement)
        return VerificationResult(decision=decision,
                                  feedback=(None if decision.accepted or errored else
                                            judge_feedback(judgement) if not judgement.passed else
                                            "; ".join(decision.reasons)),
                                  judgement=judgement, errors=log.errors, usage=log.ledger.totals(), errored=errored,
                                  elapsed_s=time.monotonic() - started)


def capability_feedback(capability: CapabilityReport) -> str:
    """Why the student pool rejected the template, with its statistic, and what to change."""
    verdict = capability.verdict
    accuracies = ", ".join(f"{name} {acc:.2f}" for name, acc in verdict.accuracies.items())
    lines = [f"It runs, but the student models' answers rejected it (accuracy with the series: {accuracies})."]
    if capability.outcome is Outcome.reversal:
        reason = verdict.reason.split("; ")[0].removeprefix(f"{Outcome.reversal.value}: ")
        lines.append(f"Expertise reversal: {reason}. Weaker models beating stronger ones "
                     "usually means the keyed answer is wrong or the question can be read two ways: check that "
                     "the answer is computed from exactly the data the question shows and that only one option "
                     "is right.")
    if verdict.blind_flag:
        lines.append(f"Blind check: {verdict.reason.split('blind: ', 1)[-1]}. Make the answer depend on the "
                     "values shown: ask about a value, a date or a comparison only the series reveals, and make "
                     "the wrong options plausible (same kind and range as the answer).")
    return "\n".join(lines)


@dataclass(frozen=True)
class StudentPoolVerifier:
    """The student pool and the capability-aligned filter as a stage of the authoring loop. `limit`
    bounds the student calls in flight over every template the stage verifies at once (the run's
    slots); None: each template's own `pool.max_concurrency`."""

    label: ClassVar[str] = "students"  # the run's live progress while the stage runs

    students: Sequence[StudentModel]
    pool: PoolConfig
    capability: CapabilityConfig
    task: str
    dataset: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limit: asyncio.Semaphore | None = None

    async def __call__(self, source: str, report: StructureReport) -> VerificationResult:
        started = time.monotonic()
        log = CallLog()
        students = [student.bind(log, self.retry) for student in self.students]
        sample = template_sample(source, report, task=self.task, dataset=self.dataset)
        answers = await aanswer_template(sample, students, self.pool, limit=self.limit)
        if answers.failed:  # a capability verdict on part of the answers is no verdict
            reason = (f"{len(answers.failed)} student call(s) gave no usable reply: no verdict "
                      f"({answers.failed[0].error})")
            return VerificationResult(decision=Decision(accepted=False, stage="students", reasons=[reason]),
                                      students=answers, errors=log.errors, usage=log.ledger.totals(), errored=True,
                                      elapsed_s=time.monotonic() - started)
        capability = assess(answers, self.capability)
        reasons = list(capability.decision.reasons)
        decision = Decision(accepted=capability.decision.accepted, stage="students", reasons=reasons)
        return VerificationResult(decision=decision,
                                  feedback=None if decision.accepted else capability_feedback(capability),
                                  students=answers, capability=capability, errors=log.errors,
                                  usage=log.ledger.totals(), elapsed_s=time.monotonic() - started)


@dataclass(frozen=True)
class SkippedStudents:
    """An advisory student ladder left out: no student answers, the template is accepted with
    `reason` ("advisory/skipped, the local ladder does not separate (measured ...)")."""

    label: ClassVar[str] = "students"

    reason: str

    async def __call__(self, source: str, report: StructureReport) -> VerificationResult:
        return VerificationResult(decision=Decision(accepted=True, stage="students", reasons=[self.reason]))


def local_student_calls(students: Sequence[StudentSpec], settings: AgentSettings) -> int | None:
    """How many items a ladder of local models only may answer at once: the calls whose llama.cpp
    threads (`local_n_threads` each) the machine's cores run side by side, at least one; None (the
    pool's own limit) when a student is hosted."""
    if not students or any(s.spec.provider != "local" for s in students):
        return None
    return max(1, (os.cpu_count() or 1) // settings.local_n_threads)


# --- the stages an authoring configuration names --------------------------------------------


@dataclass(frozen=True)
class ReviewModels:
    """The judges and students an authoring configuration names, built once (a missing key or
    model file fails before any work)."""

    judges: list[JudgeModel]
    students: list[StudentModel]
    solver: ModelHandle | None = None
    solver_name: str = ""
    replay_only: bool = False  # no solver model: the re-derivation replays the building blocks' calls only
    advisory_panel: bool = False  # every judge is advisory: the panel's scores decide nothing
    skipped_students: str | None = None  # an advisory ladder left out: why
    student_calls: int | None = None  # student calls in flight over the run (None: each template's pool limit)


def build_review_models(config: AuthorConfig, *, settings: AgentSettings, policy: SpecPolicy | None = None,
                        pipeline: Pipeline | None = None) -> ReviewModels:
    """The models of `pipeline` (default: `config` resolved against `settings`)."""
    pipeline = pipeline or resolve_pipeline(config, settings)
    solver = None if pipeline.solver is None else build_solver(pipeline.solver, settings=settings, policy=policy)
    return ReviewModels(
        solver=solver, solver_name=str(pipeline.solver) if pipeline.solver else REPLAY_SOLVER,
        replay_only=pipeline.replay_only,
        advisory_panel=bool(pipeline.judges) and set(pipeline.judges) <= set(pipeline.advisory_judges),
        skipped_students=pipeline.skipped_students, student_calls=local_student_calls(pipeline.students, settings),
        judges=build_judges(pipeline.judges, settings=settings, samples=config.judge_samples,
                            retries=config.judge_retries, max_tokens=config.review_max_tokens, policy=policy),
        students=build_students(pipeline.students, settings=settings, text_format=config.student_format,
                                max_tokens=config.review_max_tokens, policy=policy))


def verification_stages(audit: ItemAuditVerifier, content: Sequence[Verifier],
                        rederivation: Verifier | None = None) -> list[Verifier]:
    """The stages after the structure check: the item audit first (always), the re-derivation
    when configured, then `content` (none: `pass_through`, which accepts what the audit passed)."""
    return [audit, *((rederivation,) if rederivation is not None else ()), *(content or (pass_through,))]


def rederivation_stage(models: ReviewModels, pool: SandboxPool, *, retry: RetryPolicy,
                       executor: Executor | None = None,
                       programs: Mapping[str, str] | None = None) -> RederivationVerifier | None:
    """The re-derivation stage with the configured solver (none: None; none installed: the trusted
    replay of block calls alone), its thresholds from ``ITEMSMITH_REDERIVATION_*``; `programs` are
    stored programs to reuse (content hash -> program)."""
    if models.solver is None and not models.replay_only:
        return None
    return RederivationVerifier(models.solver, models.solver_name, pool, retry=retry, executor=executor,
                                programs=dict(programs or {}))


def content_stages(models: ReviewModels, config: AuthorConfig, *, dataset: str, retry: RetryPolicy) -> list[Verifier]:
    """The judge panel and the student pool (or the note of an advisory ladder skipped) as stages,
    in that order (none configured: none)."""
    stages: list[Verifier] = []
    if models.judges:
        stages.append(JudgePanelVerifier(models.judges, config.panel, task=config.task, dataset=dataset, retry=retry,
                                         advisory=models.advisory_panel))
    if models.students:
        limit = None if models.student_calls is None else asyncio.Semaphore(models.student_calls)
        stages.append(StudentPoolVerifier(models.students, config.pool, config.capability, task=config.task,
                                          dataset=dataset, retry=retry, limit=limit))
    elif models.skipped_students is not None:
        stages.append(SkippedStudents(models.skipped_students))
    return stages
