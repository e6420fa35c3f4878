"""The content stages of the authoring loop: the judge panel and the student pool, as `Verifier`s.

`verification` scores and decides; this module builds its models from specs, feeds it the items
the structure check sampled, and turns a rejection into feedback the generator can act on:

- `JudgePanelVerifier`: G-Eval judges score the sampled items per criterion
  (`verification.judges`); a rejection names each failing criterion with its scores, and the
  feedback quotes the lowest-scoring judges' rationales for those criteria.
- `StudentPoolVerifier`: students of declared capability answer the items with and without the
  series (`verification.students`), then the capability filter (`verification.capability`)
  decides; a rejection on expertise reversal or on the blind flag carries the statistic in its
  reasons and in the feedback.

A model call that fails for good (after the bounded retries of `agents.inference.complete`) is
recorded on the result (`errors`) and counts as a missing judge score or an unanswered item,
never as a crash of the run. Every call is metered into the stage's `usage`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, model_validator

from itemsmith.templates_bank.items.rendering import TextFormat
from itemsmith.templates_bank.items.schema import Decision, StructureReport
from itemsmith.verification.capability import CapabilityConfig, CapabilityReport, Outcome, assess
from itemsmith.verification.judges import CRITERIA, Judge, JudgeConfig, PanelConfig, TemplateJudgement, ajudge_template
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import LetterScorer, PoolConfig, Student, StudentConfig, aanswer_template

from itemsmith.agents.errors import EmptyReplyError, ProviderCallError, ProviderConfigError
from itemsmith.agents.inference import ModelHandle, RetryPolicy, complete
from itemsmith.agents.providers import ModelOptions, ModelSpec, make_model
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.usage import CallUsage, UsageLedger, cost_of
from itemsmith.agents.verify import VerificationResult

StudentMode = Literal["auto", "chat", "loglik"]
RATIONALE_CHARS = 400
# a "rationale" that is only the score (terse judges reply just "Score: N")
_BARE_SCORE = re.compile(r"^\W*score\W*\d+(?:\.\d+)?(?:\s*/\s*10)?\W*$", re.IGNORECASE)


class StudentSpec(BaseModel):
    """A student: a model spec and its declared capability rank (larger is more capable).

    Written ``SPEC@RANK`` on the command line (``local:smollm2-135m@1``). ``auto`` answers by
    letter log-likelihood for local models and by chat (one parsed final letter) otherwise.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(min_length=3)
    rank: int
    mode: StudentMode = "auto"

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        spec, at, rank = value.strip().rpartition("@")
        try:
            return {"spec": spec, "rank": int(rank)} if at and spec else _bad_student(value)
        except ValueError:
            return _bad_student(value)

    @property
    def resolved_mode(self) -> Literal["chat", "loglik"]:
        if self.mode != "auto":
            return self.mode
        return "loglik" if ModelSpec.parse(self.spec).provider == "local" else "chat"

    @property
    def name(self) -> str:
        return ModelSpec.parse(self.spec).model


def _bad_student(value: str) -> Any:
    raise ValueError(f"student {value!r} is not SPEC@RANK with an integer rank (e.g. local:smollm2-135m@1)")


# --- metered, failure-tolerant models -------------------------------------------------------


@dataclass
class CallLog:
    """What one stage run called: usage per call and the calls that failed for good."""

    ledger: UsageLedger = field(default_factory=UsageLedger)
    errors: list[str] = field(default_factory=list)


class GuardedChatModel(BaseChatModel):
    """A chat model behind `agents.inference.complete` (timeout, bounded retries, usage): a call
    that still fails is logged and answered with a text saying so, which the stage then reads
    as an unparsed reply (a missing judge score, an unanswered item)."""

    handle: SkipValidation[ModelHandle]
    retry: RetryPolicy
    log: SkipValidation[CallLog]  # shared by the stage's models: kept as is, never copied
    role: str = ""

    @property
    def _llm_type(self) -> str:
        return "guarded"

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        handle = self.handle
        if kwargs:  # e.g. logprobs=True, top_logprobs=k bound by the judge panel
            handle = replace(handle, model=handle.model.bind(**kwargs))  # type: ignore[arg-type]
        try:
            reply, _ = await complete(handle, messages, retry=self.retry, ledger=self.log.ledger, role=self.role)
        except (ProviderCallError, EmptyReplyError) as exc:
            self.log.errors.append(f"{self.role} {handle.spec}: {exc}")
            reply = AIMessage(f"(no reply: {exc})")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return asyncio.run(self._agenerate(messages, stop, **kwargs))


@dataclass
class MeteredScorer:
    """A `LetterScorer` whose calls are metered; a failed call is logged and gives no scores
    (the item counts as unanswered)."""

    scorer: LetterScorer
    provider: str
    name: str
    log: CallLog

    def score_letters(self, prompt: str, letters: Sequence[str]) -> Mapping[str, float]:
        started = time.monotonic()
        try:
            scores = self.scorer.score_letters(prompt, letters)
        except Exception as exc:  # noqa: BLE001 - any failure of the model is recorded, the item stays unanswered
            self.log.errors.append(f"student {self.provider}:{self.name}: {type(exc).__name__}: {exc}")
            return {}
        count = getattr(self.scorer, "count_tokens", None)  # llama.cpp scorers report their prompt's tokens
        tokens = count(prompt) if count else 0
        self.log.ledger.record(CallUsage(provider=self.provider, model=self.name, role="student",
                                         input_tokens=tokens, cost_usd=cost_of(self.provider, self.name, tokens, 0),
                                         latency_s=time.monotonic() - started))
        return scores


# --- the stages -----------------------------------------------------------------------------


def template_sample(source: str, report: StructureReport, *, task: str, dataset: str) -> TemplateSample:
    """The structure check's items as the content stages read them (id: hash of the source)."""
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
    """The judge panel as a stage of the authoring loop."""

    judges: Sequence[tuple[JudgeConfig, ModelHandle]]
    panel: PanelConfig
    task: str
    dataset: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    async def __call__(self, source: str, report: StructureReport) -> VerificationResult:
        started = time.monotonic()
        log = CallLog()
        judges = [Judge(config, GuardedChatModel(handle=handle, retry=self.retry, log=log, role="judge"))
                  for config, handle in self.judges]
        sample = template_sample(source, report, task=self.task, dataset=self.dataset)
        judgement = await ajudge_template(sample, judges, self.panel)
        return VerificationResult(decision=judgement.decision,
                                  feedback=None if judgement.passed else judge_feedback(judgement),
                                  judgement=judgement, errors=log.errors, usage=log.ledger.totals(),
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
    """The student pool and the capability-aligned filter as a stage of the authoring loop."""

    students: Sequence[tuple[StudentConfig, ModelHandle | LetterScorer]]
    pool: PoolConfig
    capability: CapabilityConfig
    task: str
    dataset: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def _student(self, config: StudentConfig, model: ModelHandle | LetterScorer, log: CallLog) -> Student:
        if isinstance(model, ModelHandle):
            return Student(config, GuardedChatModel(handle=model, retry=self.retry, log=log, role="student"))
        provider, _, name = (config.model or f"local:{config.name}").partition(":")
        return Student(config, MeteredScorer(model, provider, name, log))

    async def __call__(self, source: str, report: StructureReport) -> VerificationResult:
        started = time.monotonic()
        log = CallLog()
        students = [self._student(config, model, log) for config, model in self.students]
        sample = template_sample(source, report, task=self.task, dataset=self.dataset)
        answers = await aanswer_template(sample, students, self.pool)
        capability = assess(answers, self.capability)
        reasons = list(capability.decision.reasons)
        if log.errors:
            reasons.append(f"{len(log.errors)} student call(s) failed and count as unanswered")
        decision = Decision(accepted=capability.decision.accepted, stage="students", reasons=reasons)
        return VerificationResult(decision=decision,
                                  feedback=None if decision.accepted else capability_feedback(capability),
                                  students=answers, capability=capability, errors=log.errors,
                                  usage=log.ledger.totals(), elapsed_s=time.monotonic() - started)


# --- building the models from specs ---------------------------------------------------------


def make_letter_scorer(spec: str, settings: AgentSettings) -> LetterScorer:
    """A log-likelihood scorer for a local model spec (``local:NAME``)."""
    from itemsmith.agents.llamacpp import LlamaCppLetterScorer, llama_available  # noqa: PLC0415
    from itemsmith.agents.local_models import get_local_model, model_path  # noqa: PLC0415

    parsed = ModelSpec.parse(spec)
    if parsed.provider != "local":
        raise ProviderConfigError(f"student {spec!r}: log-likelihood answers need a local model (local:NAME); "
                                  "other providers answer in chat mode")
    entry = get_local_model(parsed.model)
    if not llama_available():
        raise ProviderConfigError(f"student {spec!r} needs llama-cpp-python: pip install 'itemsmith[{entry.extra}]'")
    return LlamaCppLetterScorer(model_path(parsed.model, settings.model_cache_dir), parsed.model,
                                n_ctx=settings.local_n_ctx, n_threads=settings.local_n_threads)


def build_judges(specs: Sequence[str], *, samples: int, max_tokens: int, retries: int = 2,
                 settings: AgentSettings) -> list[tuple[JudgeConfig, ModelHandle]]:
    """One judge per spec (named by its spec, its provider as the family)."""
    if len(set(specs)) != len(specs):
        raise ProviderConfigError(f"judge specs must be distinct, got {list(specs)}")
    judges = []
    for spec in specs:
        handle = make_model(spec, options=ModelOptions(max_tokens=max_tokens), settings=settings)
        judges.append((JudgeConfig(name=spec, family=handle.provider, samples=samples, max_retries=retries), handle))
    return judges


def build_students(specs: Sequence[StudentSpec], *, max_tokens: int, settings: AgentSettings,
                   text_format: TextFormat = TextFormat.plain,
                   ) -> list[tuple[StudentConfig, ModelHandle | LetterScorer]]:
    """One student per spec, named by its model, shown items in `text_format`, answering in its
    resolved mode."""
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ProviderConfigError(f"student models must be distinct, got {names}")
    students: list[tuple[StudentConfig, ModelHandle | LetterScorer]] = []
    for spec in specs:
        config = StudentConfig(name=spec.name, rank=spec.rank, model=spec.spec, text_format=text_format)
        if spec.resolved_mode == "loglik":
            students.append((config, make_letter_scorer(spec.spec, settings)))
        else:
            students.append((config, make_model(spec.spec, options=ModelOptions(max_tokens=max_tokens),
                                                settings=settings)))
    return students
