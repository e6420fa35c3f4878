"""The one place that builds the models the verification stages and the release operations call,
for every entry point (author, recheck, reverify, evaluate; command line and jobs):

- specs come parsed (`agents.llm.spec`): ``SPEC`` for judges and evaluated models, ``SPEC@RANK`` for
  students;
- one identity rule: the canonical spec (``str(spec)``, ``provider:model[@endpoint]``) names a
  judge or a student everywhere, so cached answers and earlier accuracies are found again;
- what a model accepts comes from the model table (`agents.llm.catalog`): temperature only where
  allowed, reasoning models get their role's reasoning budget, judges use log-probabilities where
  the model returns them, the Anthropic cache breakpoint only where the prefix reaches the model's
  minimum;
- bounded retries and timeouts from `AgentSettings` (`retry_policy`), every call metered into a
  `CallLog`; a call that fails for good, comes back empty or is cut at the output limit is
  missing data (`verification.calls.ModelCallFailed`): a missing score, an item not answered,
  never an answer, a verdict or a crash; with ``strict`` (evaluation) it raises instead;
- local models answer by letter log-likelihood (students, evaluated models) and judge by reading
  the score distribution in one forward pass; hosted models by chat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import SkipValidation

from itemsmith.agents.errors import EmptyReplyError, ProviderCallError, ProviderConfigError
from itemsmith.agents.llm.catalog import entry_for
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete
from itemsmith.agents.llm.providers import ModelOptions, SpecPolicy, make_model
from itemsmith.agents.llm.providers.local import make_letter_scorer, make_score_reader
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.llm.usage import CallUsage, UsageLedger, cost_of
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.items.rendering import TextFormat
from itemsmith.verification.calls import ModelCallFailed
from itemsmith.verification.judges import CRITERION_MARKER, ChatScoreReader, Judge, JudgeConfig, ScoreReader
from itemsmith.verification.students import LetterScorer, Student, StudentConfig


def retry_policy(settings: AgentSettings) -> RetryPolicy:
    """Bounded exponential backoff for transient provider errors, from settings."""
    return RetryPolicy(max_retries=settings.max_retries, initial_s=settings.backoff_initial_s,
                       max_s=settings.backoff_max_s, max_wait_s=settings.max_retry_wait_s)


# --- metered, failure-tolerant models -------------------------------------------------------


@dataclass
class CallLog:
    """What one stage run called: usage per call and the calls that failed for good."""

    ledger: UsageLedger = field(default_factory=UsageLedger)
    errors: list[str] = field(default_factory=list)


CHARS_PER_TOKEN = 4  # English text; digits and symbols take more tokens per character, so this undercounts


def estimated_tokens(text: str) -> int:
    """A lower estimate of a text's tokens (no tokenizer call)."""
    return len(text) // CHARS_PER_TOKEN


def _cache_breakpoint(messages: list[BaseMessage], min_tokens: int = 0) -> list[BaseMessage]:
    """Anthropic caches a prompt prefix only where a content block says so, and only a prefix of at
    least the model's minimum: mark the end of a judge prompt's items part (shared by every
    criterion) when the system prompt and that part reach `min_tokens` (estimated from below)."""
    last = messages[-1]
    text = last.content if isinstance(last.content, str) else None
    if not isinstance(last, HumanMessage) or text is None or CRITERION_MARKER not in text:
        return messages
    shared, rest = text.split(CRITERION_MARKER, 1)
    before = "".join(m.content for m in messages[:-1] if isinstance(m.content, str))
    if estimated_tokens(before + shared) < min_tokens:
        return messages  # below the minimum nothing is cached, and the mark would only say otherwise
    blocks = [{"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": CRITERION_MARKER + rest}]
    return [*messages[:-1], HumanMessage(content=blocks)]


class GuardedChatModel(BaseChatModel):
    """A chat model behind `agents.llm.inference.complete` (timeout, bounded retries, usage): a call
    that still fails, comes back empty or is cut at the output limit is logged and raised as
    `ModelCallFailed` (a missing judge score, an item not answered: never a reply to parse); with
    ``strict`` as `ProviderCallError` (an evaluation stops, resumable, rather than score it)."""

    handle: SkipValidation[ModelHandle]
    retry: RetryPolicy
    log: SkipValidation[CallLog]  # shared by the stage's models: kept as is, never copied
    role: str = ""
    strict: bool = False
    accept_cut: bool = False  # a reply capped on purpose (a score read from its first tokens) is an answer

    @property
    def _llm_type(self) -> str:
        return "guarded"

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        handle = self.handle
        if kwargs:  # e.g. logprobs=True, top_logprobs=k bound by the judge panel
            handle = replace(handle, model=handle.model.bind(**kwargs))  # type: ignore[arg-type]
        if handle.provider == "anthropic":
            capabilities = handle.capabilities or entry_for(handle.provider, handle.name).capabilities
            messages = _cache_breakpoint(messages, capabilities.cache_min_tokens)
        try:
            reply, usage = await complete(handle, messages, retry=self.retry, ledger=self.log.ledger, role=self.role,
                                          capped=self.accept_cut)
        except ProviderCallError as exc:
            raise self._missing(str(exc), "failed") from exc
        except EmptyReplyError as exc:
            raise self._missing(str(exc), "empty") from exc
        if usage.outcome == "cut":
            raise self._missing(f"{handle.spec} reply cut at the output limit after {usage.output_tokens} tokens "
                                "(raise the role's reply or reasoning budget)", "cut")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _missing(self, message: str, outcome: Literal["failed", "empty", "cut"]) -> Exception:
        self.log.errors.append(f"{self.role} {self.handle.spec}: {message}")
        if self.strict:
            return ProviderCallError(message)
        return ModelCallFailed(message, outcome=outcome)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return asyncio.run(self._agenerate(messages, stop, **kwargs))


def _record(log: CallLog, identity: str, role: str, tokens: int, started: float,
            outcome: Literal["answered", "failed"] = "answered") -> None:
    provider, _, name = identity.partition(":")
    log.ledger.record(CallUsage(provider=provider, model=name, role=role, input_tokens=tokens, outcome=outcome,
                                cost_usd=cost_of(provider, name, tokens, 0), latency_s=time.monotonic() - started))


@dataclass
class MeteredScorer:
    """A `LetterScorer` whose calls are metered; a failed call is logged and raised as
    `ModelCallFailed` (the item is not answered), or with ``strict`` as it came."""

    scorer: LetterScorer
    identity: str
    log: CallLog
    strict: bool = False

    def score_letters(self, prompt: str, letters: Sequence[str]) -> Mapping[str, float]:
        started = time.monotonic()
        try:
            scores = self.scorer.score_letters(prompt, letters)
        except Exception as exc:  # any failure of the model is recorded, the item stays unanswered
            self.log.errors.append(f"student {self.identity}: {type(exc).__name__}: {exc}")
            _record(self.log, self.identity, "student", 0, started, outcome="failed")
            if self.strict:
                raise
            raise ModelCallFailed(f"{self.identity}: {type(exc).__name__}: {exc}") from exc
        count = getattr(self.scorer, "count_tokens", None)  # llama.cpp scorers report their prompt's tokens
        _record(self.log, self.identity, "student", count(prompt) if count else 0, started)
        return scores


@dataclass
class MeteredReader:
    """A `ScoreReader` whose calls are metered; a failed call is logged and raised as
    `ModelCallFailed` (the judge's score is missing)."""

    reader: ScoreReader
    identity: str
    log: CallLog

    async def ascore_probabilities(self, messages: list[BaseMessage]) -> Mapping[int, float]:
        started = time.monotonic()
        try:
            probabilities = await self.reader.ascore_probabilities(messages)
        except Exception as exc:  # any failure of the model is recorded, the score stays missing
            self.log.errors.append(f"judge {self.identity}: {type(exc).__name__}: {exc}")
            _record(self.log, self.identity, "judge", 0, started, outcome="failed")
            raise ModelCallFailed(f"{self.identity}: {type(exc).__name__}: {exc}") from exc
        _record(self.log, self.identity, "judge", 0, started)
        return probabilities


LETTER_TOP_LOGPROBS = 20


def _letter_logprobs(reply: AIMessage, letters: Sequence[str]) -> dict[str, float]:
    """Each option letter's log-probability at the reply's first token (spaces, brackets and case
    ignored; a letter outside the top alternatives gets just below the least likely one shown)."""
    content = (reply.response_metadata or {}).get("logprobs") or {}
    tokens = content.get("content") if isinstance(content, Mapping) else None
    if not tokens:
        return {}
    seen: dict[str, float] = {}
    for alternative in tokens[0].get("top_logprobs") or [tokens[0]]:
        letter = str(alternative.get("token", "")).strip().strip("()[].:").upper()
        if letter in letters and letter not in seen:
            seen[letter] = float(alternative["logprob"])
    if not seen:
        return {}
    floor = min(seen.values()) - 1.0
    return {letter: seen.get(letter, floor) for letter in letters}


@dataclass
class ChatLetterScorer:
    """A `LetterScorer` over a hosted or OpenAI-compatible chat model that returns log-probabilities:
    one call capped at a token, read from the top alternatives of that token (a student answering
    by letter likelihood, as a local model does). Bound to a `CallLog` and a retry policy (`bound`);
    its calls go through `agents.llm.inference.complete` like every chat call."""

    handle: ModelHandle
    identity: str
    log: CallLog | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    strict: bool = False

    def bound(self, log: CallLog, retry: RetryPolicy, strict: bool) -> ChatLetterScorer:
        return replace(self, log=log, retry=retry, strict=strict)

    def score_letters(self, prompt: str, letters: Sequence[str]) -> Mapping[str, float]:
        model = self.handle.model.bind(logprobs=True, top_logprobs=LETTER_TOP_LOGPROBS, max_tokens=1)
        handle = replace(self.handle, model=model)  # type: ignore[arg-type]
        log = self.log or CallLog()
        try:  # a worker thread of the pool: its own loop (the client opens a pool per loop)
            reply, _ = asyncio.run(complete(handle, [HumanMessage(prompt)], retry=self.retry, ledger=log.ledger,
                                            role="student", capped=True))
        except (ProviderCallError, EmptyReplyError) as exc:
            log.errors.append(f"student {self.identity}: {exc}")
            if self.strict:
                raise ProviderCallError(str(exc)) from exc
            outcome: Literal["failed", "empty"] = "failed" if isinstance(exc, ProviderCallError) else "empty"
            raise ModelCallFailed(str(exc), outcome=outcome) from exc
        return _letter_logprobs(reply, letters)


# --- judges, students and evaluated models from specs ----------------------------------------


@dataclass(frozen=True)
class JudgeModel:
    """A judge built from its spec: its configuration and its model (a chat model handle, or a
    score reader for a local model). `bind` makes the panel's `Judge` for one stage run."""

    config: JudgeConfig
    model: ModelHandle | ScoreReader

    def bind(self, log: CallLog, retry: RetryPolicy) -> Judge:
        if isinstance(self.model, ModelHandle) and self.config.form == "score_first":  # a chat model's logprobs
            guarded = GuardedChatModel(handle=self.model, retry=retry, log=log, role="judge", accept_cut=True)
            return Judge(self.config, ChatScoreReader(guarded))
        if isinstance(self.model, ModelHandle):
            return Judge(self.config, GuardedChatModel(handle=self.model, retry=retry, log=log, role="judge"))
        return Judge(self.config, MeteredReader(self.model, self.config.name, log))


@dataclass(frozen=True)
class StudentModel:
    """A student built from its spec: its configuration and its model (a chat model handle, or a
    letter scorer for a local model). `bind` makes the pool's `Student` for one stage run."""

    config: StudentConfig
    model: ModelHandle | LetterScorer

    def bind(self, log: CallLog, retry: RetryPolicy, *, strict: bool = False) -> Student:
        """With ``strict`` a call that fails for good raises instead of leaving the item unanswered."""
        if isinstance(self.model, ModelHandle):
            return Student(self.config, GuardedChatModel(handle=self.model, retry=retry, log=log, role="student",
                                                         strict=strict))
        if isinstance(self.model, ChatLetterScorer):
            return Student(self.config, self.model.bound(log, retry, strict))
        return Student(self.config, MeteredScorer(self.model, self.config.name, log, strict))

    @property
    def max_concurrency(self) -> int | None:
        if isinstance(self.model, ModelHandle | ChatLetterScorer):
            handle = self.model if isinstance(self.model, ModelHandle) else self.model.handle
            return handle.max_concurrency
        return 1


def build_judges(specs: Sequence[ModelSpec], *, settings: AgentSettings | None = None, samples: int = 3,
                 retries: int = 2, max_tokens: int = 600, policy: SpecPolicy | None = None) -> list[JudgeModel]:
    """One judge per spec, named by its identity, its provider as the family: local models read
    their score in one pass, hosted ones reason and are sampled."""
    settings = settings or get_settings()
    names = [str(spec) for spec in specs]
    if len(set(names)) != len(names):
        raise ProviderConfigError(f"judge specs must be distinct, got {names}")
    judges = []
    for spec, name in zip(specs, names, strict=True):
        if spec.provider == "local":
            config = JudgeConfig(name=name, family="local", form="score_first")
            judges.append(JudgeModel(config, make_score_reader(spec, settings)))
            continue
        handle = make_model(spec, options=ModelOptions(max_tokens=max_tokens, role="judge"), settings=settings,
                            policy=policy)
        logprobs = handle.capabilities is not None and handle.capabilities.logprobs
        if logprobs and handle.provider == "openai_compatible":  # a self-hosted model reads its score in one pass
            config = JudgeConfig(name=name, family=handle.provider, form="score_first")
        else:  # hosted ones reason first; the score token's logprobs weigh it where the model returns them
            config = JudgeConfig(name=name, family=handle.provider, samples=samples, max_retries=retries,
                                 logprobs=logprobs)
        judges.append(JudgeModel(config, handle))
    return judges


def build_students(specs: Sequence[StudentSpec], *, settings: AgentSettings | None = None, max_tokens: int = 600,
                   text_format: TextFormat = TextFormat.plain, decimals: int = 2,
                   policy: SpecPolicy | None = None) -> list[StudentModel]:
    """One student per spec, named by its identity, shown items in `text_format`, answering in
    its resolved mode; a hosted or OpenAI-compatible model that returns log-probabilities (model
    table, endpoint settings) answers by letter likelihood unless its mode says chat."""
    settings = settings or get_settings()
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ProviderConfigError(f"student models must be distinct, got {names}")
    students = []
    for spec in specs:
        config = StudentConfig(name=spec.name, rank=spec.rank, model=str(spec.spec), text_format=text_format,
                               decimals=decimals)
        if spec.resolved_mode == "loglik":
            students.append(StudentModel(config, make_letter_scorer(spec.spec, settings)))
            continue
        handle = make_model(spec.spec, options=ModelOptions(max_tokens=max_tokens, role="student"),
                            settings=settings, policy=policy)
        if spec.mode == "auto" and handle.capabilities is not None and handle.capabilities.logprobs:
            students.append(StudentModel(config, ChatLetterScorer(handle, spec.name)))  # letters by likelihood
        else:
            students.append(StudentModel(config, handle))
    return students


def build_solver(spec: ModelSpec, *, settings: AgentSettings | None = None, max_tokens: int | None = None,
                 policy: SpecPolicy | None = None) -> ModelHandle:
    """The re-derivation stage's solver (`agents.stages.rederivation`): a chat model that writes code. Its
    reply budget is the provider's (`max_output_tokens`, a local model's `local_max_output_tokens`),
    with the `solver` role's reasoning budget on top for a reasoning model: a strong model that
    explains before its program must not be cut before the program."""
    return make_model(spec, options=ModelOptions(max_tokens=max_tokens, temperature=0.2, role="solver"),
                      settings=settings or get_settings(), policy=policy)


def build_respondent(spec: ModelSpec, *, settings: AgentSettings | None = None, decimals: int = 2,
                     policy: SpecPolicy | None = None) -> StudentModel:
    """The model under evaluation, built like a student (rank 0)."""
    return build_students([StudentSpec(spec=spec, rank=0)], settings=settings, decimals=decimals, policy=policy)[0]
