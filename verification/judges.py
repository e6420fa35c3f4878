"""The judge panel: several models score a template's sampled items, G-Eval style.

Every prompt shows the task, the dataset and up to ``items_per_prompt`` sampled items (series,
question, options, keyed answer, the template's rationale) FIRST, then the criterion: the items
part is a prefix shared by every criterion and every judge of one model, so llama.cpp's prompt
cache and hosted providers' prompt caching reuse it. A judge reads its score in one of two forms:

- ``reasoning``: the judge reasons, then ends with ``Score: N`` (1 to 10). With ``logprobs=True``
  (OpenAI-compatible providers put them in ``response_metadata["logprobs"]``) the score is the
  probability-weighted mean of the score token's alternatives that are scores themselves
  (G-Eval's form-filling with token probabilities); otherwise the mean of ``samples`` sampled
  scores. A reply without a parseable score is asked again, at most ``max_retries`` times per
  sample; a judge that never gives one is recorded with ``score=None`` and the reason, never as
  a zero. A call that gave no usable reply (`verification.calls.ModelCallFailed`: failed, empty or
  cut) is not re-asked: the score is missing with ``call_failed`` set, and it is not cached.
- ``score_first``: the judge is a `ScoreReader` that returns the probability of each score 1..10
  as the very next tokens after the prompt, in one forward pass with no sampling (local llama.cpp
  models; chat models that return log-probabilities through `ChatScoreReader`). The score is the
  probability-weighted mean, the rationale lists the distribution.

Other exceptions from the model itself propagate: callers wrap models in their own bounded
retries and turn what still fails into `ModelCallFailed`.

Scores are aggregated per criterion across judges (mean and min, against per-criterion
thresholds), agreement is Krippendorff's alpha (interval level), and every judge's rationale is
kept in the `TemplateJudgement`.

A `ScoreCache` passed to the panel is asked before each (judge, criterion) prompt is sent: a
stored score for the same `JudgeCall` is reused and no model is called; a freshly drawn score
is handed to it to store (see `templates_bank.reverification`).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.rendering import downsample_item, option_letter, render_item
from itemsmith.items.schema import Decision, Item, JudgeScore
from itemsmith.verification.agreement import krippendorff_alpha_interval
from itemsmith.verification.calls import ModelCallFailed
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.stage_configs import Criterion, CriterionThreshold, PanelConfig

__all__ = [
    "CRITERIA", "CRITERION_MARKER", "advisory_decision", "separation_auc", "ChatScoreReader", "Criterion", "CriterionAggregate", "CriterionThreshold", "Judge", "JudgeCall", "JudgeConfig",
    "PanelConfig", "ScoreCache", "TemplateJudgement", "ajudge_template", "ajudge_templates", "judge_template",
    "judge_templates", "judge_prompt", "judgement_from_scores", "krippendorff_alpha_interval", "panel_agreement",
    "parse_score", "ScoreReader", "score_distribution_text", "weighted_score",
]



@dataclass(frozen=True)
class _CriterionSpec:
    definition: str
    steps: tuple[str, ...]


CRITERIA: dict[Criterion, _CriterionSpec] = {
    "relevance": _CriterionSpec(
        "The questions test reasoning that matters for the task and the dataset described; they are "
        "about this data, not generic trivia.",
        ("Read the task and the dataset description.",
         "Decide what a domain expert would want to test on this data.",
         "Judge how directly the sampled questions serve that purpose.")),
    "unambiguity": _CriterionSpec(
        "Each question has exactly one defensible correct option; wording, units, windows and "
        "thresholds leave no room for two readings.",
        ("For each question, try to argue for every option that is not keyed.",
         "Note any wording that admits two readings or any second option that is also right.",
         "Score low if a careful expert could disagree with the key.")),
    "specificity": _CriterionSpec(
        "The question states precisely what is asked: which channel, which part of the series, "
        "which quantity or property, and how it is compared.",
        ("Check whether the question names the channel, time span and quantity it is about.",
         "Check whether vague words (large, unusual, trend) are made concrete.",
         "Score high only if nothing needs to be guessed.")),
    "solvability": _CriterionSpec(
        "A competent analyst can reach the keyed answer from the information given (the series, "
        "the context and the question), and the key is correct.",
        ("Work out each answer from the shown data as far as you can.",
         "Compare with the keyed answer and the template's rationale.",
         "Score low if the key looks wrong or needs information that is not given.")),
    "needs_series": _CriterionSpec(
        "The series must be read to answer: without the data the question cannot be answered "
        "better than by guessing (10), versus answerable from the question text or world "
        "knowledge alone (1).",
        ("Cover the series and try to answer from the question, the options and general knowledge.",
         "Look for options that are implausible or give the answer away on their own.",
         "Score by how much the data is really needed.")),
}

_SYSTEM = ("You are an expert reviewer of multiple-choice exam questions about time-series data. "
           "You evaluate one criterion at a time, carefully and strictly.")
CRITERION_MARKER = "\n\nCriterion: "  # where the shared items part of a judge prompt ends
_FORM = ('Think through the evaluation steps, then give your score on the last line exactly as '
         '"Score: N", where N is an integer from 1 (worst) to 10 (best).')
_SCORE_FIRST_FORM = ('Reply with the score only, on one line exactly as "Score: N", where N is an integer '
                     'from 1 (worst) to 10 (best).')
SCORES = tuple(range(1, 11))
_SCORE_RE = re.compile(r"score\s*(?:[:=]|is)?\s*\**\s*(\d{1,2}(?:\.\d+)?)\s*\**\s*(?:/\s*10|out\s+of\s+10)?",
                       re.IGNORECASE)


# --- configuration --------------------------------------------------------------------------


class JudgeConfig(BaseModel):
    """One judge of the panel. ``family`` (e.g. the provider) is recorded so a panel can be
    checked for mixing model families. Sampled scores only spread when the chat model was built
    with a temperature above zero."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    family: str | None = None
    form: Literal["reasoning", "score_first"] = Field(
        "reasoning", description="reason then score (sampled or log-probability weighted), or read the score "
                                 "distribution in one pass (the judge's model is a ScoreReader)")
    logprobs: bool = Field(False, description="the provider returns token log-probabilities (OpenAI-compatible)")
    top_logprobs: int = Field(10, ge=2, le=20)
    samples: int = Field(3, ge=1, le=20, description="k sampled scores when no log-probabilities are used")
    max_retries: int = Field(2, ge=0, le=5, description="re-asks after a reply with no parseable score")


@runtime_checkable
class ScoreReader(Protocol):
    """A judge model read in one pass: the probability of each score 1..10 as the continuation of
    the prompt (no sampling, no reasoning text). Probabilities need not sum to one: the panel
    normalizes them over the scores."""

    async def ascore_probabilities(self, messages: list[BaseMessage]) -> Mapping[int, float]: ...


@dataclass(frozen=True)
class Judge:
    """A configured judge and the model behind it: a chat model (``reasoning`` form) or a
    `ScoreReader` (``score_first`` form)."""

    config: JudgeConfig
    model: BaseChatModel | ScoreReader

    def __post_init__(self) -> None:
        reader = isinstance(self.model, ScoreReader)
        if reader != (self.config.form == "score_first"):
            raise ValueError(f"judge {self.config.name!r}: the score_first form needs a ScoreReader model and "
                             "the reasoning form a chat model")


@dataclass(frozen=True)
class JudgeCall:
    """One judge asked about one criterion of one template: what a cached score must match."""

    judge: JudgeConfig
    criterion: Criterion
    template_id: str
    messages: list[BaseMessage]
    items: list[Item]  # the items the prompt shows


class ScoreCache(Protocol):
    """Stored judge scores. `get` returns a stored score for the same call (the model is then not
    called), or None; `put` receives every freshly drawn score."""

    def get(self, call: JudgeCall) -> JudgeScore | None: ...

    def put(self, call: JudgeCall, score: JudgeScore) -> None: ...


# --- verdict records ------------------------------------------------------------------------


class CriterionAggregate(BaseModel):
    """One criterion across the panel."""

    criterion: Criterion
    mean: float | None
    min: float | None
    n_scores: int
    n_missing: int
    passed: bool
    reason: str


class TemplateJudgement(BaseModel):
    """The panel's verdict on one template: every judge's score and rationale per criterion,
    the aggregates, the agreement and the decision."""

    template_id: str
    scores: list[JudgeScore]
    aggregates: list[CriterionAggregate]
    agreement: float | None = Field(description="Krippendorff's alpha (interval), judges x criteria")
    decision: Decision

    @property
    def passed(self) -> bool:
        return self.decision.accepted

    @property
    def failed_calls(self) -> list[JudgeScore]:
        """The scores missing because a call gave no usable reply (not a verdict on the template)."""
        return [s for s in self.scores if s.call_failed is not None]


# --- prompts and parsing --------------------------------------------------------------------


def judge_prompt(sample: TemplateSample, criterion: Criterion, config: PanelConfig,
                 form: Literal["reasoning", "score_first"] = "reasoning") -> list[BaseMessage]:
    """The G-Eval prompt for one criterion on a template's sampled items: the task, the dataset
    and the items first (a prefix shared by every criterion), then the criterion and the form."""
    spec = CRITERIA[criterion]
    steps = "\n".join(f"{i}. {step}" for i, step in enumerate(spec.steps, 1))
    blocks = []
    for number, item in enumerate(sample.items[:config.items_per_prompt], 1):
        shown, note = downsample_item(item, config.max_series_points)
        body = render_item(shown, config.text_format, config.decimals)
        keyed = f"Keyed answer: {option_letter(item.answer_index)}) {item.answer}"
        rationale = f"\nHow the template computed it: {item.rationale.strip()}" if item.rationale else ""
        blocks.append(f"### Question {number}\n{note}{body}\n\n{keyed}{rationale}")
    header = [f"Task the questions were written for: {sample.task.strip() or '(not given)'}"]
    if sample.dataset.strip():
        header.append(f"Dataset: {sample.dataset.strip()}")
    shared = "\n".join(header) + "\n\nQuestions sampled from one question template:\n\n" + "\n\n".join(blocks)
    if sample.evidence:
        shared += "\n\nIndependent checks of this template:\n" + "\n".join(f"- {line}" for line in sample.evidence)
    closing = _FORM if form == "reasoning" else _SCORE_FIRST_FORM
    text = (f"{shared}{CRITERION_MARKER}{criterion.replace('_', ' ')}. {spec.definition}\n\n"
            f"Evaluation steps:\n{steps}\n\n{closing}")
    return [SystemMessage(_SYSTEM), HumanMessage(text)]


def parse_score(reply: str) -> tuple[int | None, str, tuple[int, int] | None]:
    """The last ``Score: N`` of a reply (an integer 1..10), the rationale before it, and the
    character span of N. ``(None, reply, None)`` when there is no valid score."""
    matches = list(_SCORE_RE.finditer(reply))
    if not matches:
        return None, reply.strip(), None
    last = matches[-1]
    number = last.group(1)
    if "." in number or not 1 <= int(number) <= 10:
        return None, reply.strip(), None
    rationale = reply[:last.start()].strip() or reply.strip()
    return int(number), rationale, last.span(1)


def _logprob_tokens(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    logprobs = metadata.get("logprobs")
    if isinstance(logprobs, Mapping):
        logprobs = logprobs.get("content")
    if isinstance(logprobs, list) and all(isinstance(t, Mapping) and "token" in t for t in logprobs):
        return logprobs
    return None


def weighted_score(reply: str, metadata: Mapping[str, Any], span: tuple[int, int]) -> float | None:
    """Probability-weighted score from the top log-probabilities of the token that holds the
    score (``span`` of the digits in ``reply``); None when they are missing, do not line up with
    the reply, or the score is split over several tokens."""
    tokens = _logprob_tokens(metadata)
    if not tokens or "".join(str(t["token"]) for t in tokens) != reply:
        return None
    offset = 0
    for token in tokens:
        text = str(token["token"])
        start, end = offset, offset + len(text)
        offset = end
        if end <= span[0]:
            continue
        if start > span[0] or text.strip() != reply[span[0]:span[1]]:
            return None
        weights = _score_alternatives(token.get("top_logprobs") or [])
        total = sum(weights.values())
        if total <= 0:
            return None
        return sum(score * weight for score, weight in weights.items()) / total
    return None


def _score_alternatives(alternatives: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Probabilities of the alternatives of one token that spell a score 1..10 (first spelling wins)."""
    weights: dict[int, float] = {}
    for alternative in alternatives:
        candidate = str(alternative.get("token", "")).strip()
        if candidate.isdigit() and 1 <= int(candidate) <= 10 and int(candidate) not in weights:
            weights[int(candidate)] = math.exp(float(alternative["logprob"]))
    return weights


class ChatScoreReader:
    """A `ScoreReader` over a chat model that returns token log-probabilities (OpenAI-compatible):
    one short reply to the score-first prompt, read from the top alternatives of its first score
    token. Where the provider's tokenizer splits "10", its mass counts as 1."""

    def __init__(self, model: BaseChatModel, *, top_logprobs: int = 20, max_tokens: int = 4) -> None:
        self.model = model.bind(logprobs=True, top_logprobs=top_logprobs, max_tokens=max_tokens)

    async def ascore_probabilities(self, messages: list[BaseMessage]) -> Mapping[int, float]:
        reply = await self.model.ainvoke(messages)
        metadata = reply.response_metadata if isinstance(reply, AIMessage) else {}
        for token in _logprob_tokens(metadata) or []:
            weights = _score_alternatives(token.get("top_logprobs") or [])
            if weights:
                return weights
        score, _, _ = parse_score(reply.text if isinstance(reply, BaseMessage) else str(reply))
        return {score: 1.0} if score is not None else {}


def score_distribution_text(probabilities: Mapping[int, float]) -> str:
    """The score distribution as a judge's rationale: the likeliest scores first."""
    top = sorted(probabilities.items(), key=lambda kv: -kv[1])[:4]
    return "score-first distribution: " + ", ".join(f"P({score})={p:.2f}" for score, p in top)


# --- scoring --------------------------------------------------------------------------------


@dataclass
class _Attempt:
    score: int | None
    rationale: str
    message: AIMessage | None
    span: tuple[int, int] | None
    raw: str
    failure: ModelCallFailed | None = None


async def _ask(model: Any, messages: list[BaseMessage], retries: int, limit: asyncio.Semaphore) -> tuple[_Attempt, int]:
    """One score from the model, re-asking after malformed replies (never after a call that gave no
    reply); returns it and the calls made."""
    attempt = _Attempt(None, "", None, None, "")
    for call in range(1, retries + 2):
        try:
            async with limit:
                message = await model.ainvoke(messages)
        except ModelCallFailed as exc:
            return _Attempt(None, "", None, None, "", failure=exc), call
        raw = message.text if isinstance(message, BaseMessage) else str(message)
        score, rationale, span = parse_score(raw)
        attempt = _Attempt(score, rationale, message if isinstance(message, AIMessage) else None, span, raw)
        if score is not None:
            return attempt, call
    return attempt, retries + 1


def _missing(judge: JudgeConfig, criterion: Criterion, attempt: _Attempt, calls: int,
             method: Literal["logprobs", "samples"]) -> JudgeScore:
    if attempt.failure is not None:
        return JudgeScore(judge=judge.name, criterion=criterion, score=None, method=method, attempts=calls,
                          call_failed=attempt.failure.outcome,
                          error=f"the call gave no usable reply ({attempt.failure.outcome}): {attempt.failure}")
    tail = attempt.raw.strip()[-300:] or "(empty reply)"
    return JudgeScore(judge=judge.name, criterion=criterion, score=None, rationale=attempt.rationale,
                      method=method, attempts=calls,
                      error=f"no parseable 'Score: N' (1..10) after {calls} call(s); last reply ends: {tail}")


async def _read(judge: Judge, reader: ScoreReader, messages: list[BaseMessage], criterion: Criterion,
                limit: asyncio.Semaphore) -> JudgeScore:
    try:
        async with limit:
            probabilities = {s: float(p) for s, p in (await reader.ascore_probabilities(messages)).items()
                             if s in SCORES and p > 0}
    except ModelCallFailed as exc:
        return JudgeScore(judge=judge.config.name, criterion=criterion, score=None, method="score_first", attempts=1,
                          call_failed=exc.outcome, error=f"the call gave no usable reply ({exc.outcome}): {exc}")
    total = sum(probabilities.values())
    if total <= 0:
        return JudgeScore(judge=judge.config.name, criterion=criterion, score=None, method="score_first", attempts=1,
                          error="the model put no probability on any score 1..10")
    normalized = {s: p / total for s, p in probabilities.items()}
    mean = sum(s * p for s, p in normalized.items())
    return JudgeScore(judge=judge.config.name, criterion=criterion, score=min(10.0, max(1.0, mean)),
                      rationale=score_distribution_text(normalized), method="score_first", attempts=1)


async def _draw(judge: Judge, messages: list[BaseMessage], criterion: Criterion,
                limit: asyncio.Semaphore) -> JudgeScore:
    cfg = judge.config
    if isinstance(judge.model, ScoreReader):
        return await _read(judge, judge.model, messages, criterion, limit)
    calls = 0
    first: _Attempt | None = None
    if cfg.logprobs:
        bound = judge.model.bind(logprobs=True, top_logprobs=cfg.top_logprobs)
        first, calls = await _ask(bound, messages, cfg.max_retries, limit)
        if first.score is None:
            return _missing(cfg, criterion, first, calls, "logprobs")
        metadata = first.message.response_metadata if first.message is not None else {}
        weighted = weighted_score(first.raw, metadata, first.span) if first.span else None
        if weighted is not None:
            return JudgeScore(judge=cfg.name, criterion=criterion, score=weighted, rationale=first.rationale,
                              samples=[float(first.score)], method="logprobs", attempts=calls)
    # mean of k sampled scores (a logprobs reply that parsed but had no usable logprobs is the first)
    attempts = [first] if first is not None else []
    for _ in range(cfg.samples - len(attempts)):
        attempt, used = await _ask(judge.model, messages, cfg.max_retries, limit)
        attempts.append(attempt)
        calls += used
    valid = [a for a in attempts if a.score is not None]
    samples = [float(a.score) for a in valid]
    if not valid:  # a failed call says more than a malformed reply
        last = next((a for a in attempts if a.failure is not None), attempts[-1])
        return _missing(cfg, criterion, last, calls, "samples")
    return JudgeScore(judge=cfg.name, criterion=criterion, score=float(np.mean(samples)),
                      rationale=valid[0].rationale, samples=samples, method="samples", attempts=calls)


async def _score(judge: Judge, sample: TemplateSample, criterion: Criterion, config: PanelConfig,
                 limit: asyncio.Semaphore, cache: ScoreCache | None) -> JudgeScore:
    messages = judge_prompt(sample, criterion, config, judge.config.form)
    if cache is None:
        return await _draw(judge, messages, criterion, limit)
    call = JudgeCall(judge.config, criterion, sample.template_id, messages, sample.items[:config.items_per_prompt])
    stored = cache.get(call)
    if stored is not None:
        return stored
    score = await _draw(judge, messages, criterion, limit)
    if score.call_failed is None:  # a failed call is asked again by a rerun
        cache.put(call, score)
    return score


def _aggregate(criterion: Criterion, scores: list[JudgeScore], config: PanelConfig) -> CriterionAggregate:
    values = [s.score for s in scores if s.score is not None]
    threshold = config.threshold(criterion)
    mean = float(np.mean(values)) if values else None
    low = float(min(values)) if values else None
    need = config.min_judges or len(scores)
    if len(values) < need:
        reason = f"{criterion}: only {len(values)} of {len(scores)} judges gave a score (need {need})"
        passed = False
    elif mean is not None and low is not None and mean >= threshold.mean and low >= threshold.min:
        reason = f"{criterion}: mean {mean:.2f} >= {threshold.mean}, min {low:.2f} >= {threshold.min}"
        passed = True
    else:
        reason = (f"{criterion}: mean {mean:.2f} (needs {threshold.mean}), min {low:.2f} (needs {threshold.min})")
        passed = False
    return CriterionAggregate(criterion=criterion, mean=mean, min=low, n_scores=len(values),
                              n_missing=len(scores) - len(values), passed=passed, reason=reason)


def judgement_from_scores(template_id: str, scores: Sequence[JudgeScore], config: PanelConfig) -> TemplateJudgement:
    """The panel's aggregates, agreement and decision from its scores (scores on criteria the
    config does not list are ignored; a criterion without scores fails as missing)."""
    scores = [s for s in scores if s.criterion in config.criteria]
    aggregates = [_aggregate(c, [s for s in scores if s.criterion == c], config) for c in config.criteria]
    by_key = {(s.judge, s.criterion): s.score for s in scores}
    judges = dict.fromkeys(s.judge for s in scores)
    matrix = np.array([[np.nan if by_key.get((j, c)) is None else by_key[(j, c)] for c in config.criteria]
                       for j in judges], dtype=float).reshape(len(judges), len(config.criteria))
    failed = [a.reason for a in aggregates if not a.passed]
    decision = Decision(accepted=not failed, stage="judges", reasons=failed or ["every criterion passed"])
    return TemplateJudgement(template_id=template_id, scores=scores, aggregates=aggregates,
                             agreement=krippendorff_alpha_interval(matrix), decision=decision)


async def _judge(sample: TemplateSample, judges: Sequence[Judge], config: PanelConfig, limit: asyncio.Semaphore,
                 cache: ScoreCache | None) -> TemplateJudgement:
    tasks = [_score(judge, sample, criterion, config, limit, cache)
             for criterion in config.criteria for judge in judges]
    return judgement_from_scores(sample.template_id, await asyncio.gather(*tasks), config)


def _checked(judges: Sequence[Judge], config: PanelConfig | None) -> PanelConfig:
    if not judges:
        raise ValueError("the panel has no judges")
    names = [j.config.name for j in judges]
    if len(set(names)) != len(names):
        raise ValueError(f"judge names must be unique, got {names}")
    return config or PanelConfig()


async def ajudge_template(sample: TemplateSample, judges: Sequence[Judge], config: PanelConfig | None = None, *,
                          cache: ScoreCache | None = None) -> TemplateJudgement:
    """Score one template with every judge on every criterion and decide (async)."""
    config = _checked(judges, config)
    return await _judge(sample, judges, config, asyncio.Semaphore(config.max_concurrency), cache)


async def ajudge_templates(samples: Sequence[TemplateSample], judges: Sequence[Judge],
                           config: PanelConfig | None = None, *,
                           cache: ScoreCache | None = None) -> list[TemplateJudgement]:
    """`ajudge_template` for several templates, sharing one concurrency limit; results in order."""
    config = _checked(judges, config)
    limit = asyncio.Semaphore(config.max_concurrency)
    return list(await asyncio.gather(*(_judge(sample, judges, config, limit, cache) for sample in samples)))


def judge_template(sample: TemplateSample, judges: Sequence[Judge], config: PanelConfig | None = None, *,
                   cache: ScoreCache | None = None) -> TemplateJudgement:
    """Synchronous `ajudge_template` (not from inside a running event loop)."""
    return asyncio.run(ajudge_template(sample, judges, config, cache=cache))


def judge_templates(samples: Sequence[TemplateSample], judges: Sequence[Judge], config: PanelConfig | None = None,
                    *, cache: ScoreCache | None = None) -> list[TemplateJudgement]:
    """Synchronous `ajudge_templates` (not from inside a running event loop)."""
    return asyncio.run(ajudge_templates(samples, judges, config, cache=cache))


def advisory_decision(judgement: TemplateJudgement) -> Decision:
    """The decision of an advisory panel (no judge validated on a corpus of known templates,
    `agents.stages.judge_validation`): its scores neither accept nor reject; they are kept as a note and
    the later stages decide."""
    verdict = "passed" if judgement.passed else "failed"
    return Decision(accepted=True, stage="judges", reasons=[
        f"advisory panel {verdict} (no validated judge: its scores decide nothing): "
        + "; ".join(judgement.decision.reasons)])


def separation_auc(good: Sequence[float], flawed: Sequence[float]) -> float | None:
    """P(a good template's score > a flawed one's), ties half (Mann-Whitney U / n m); None when a
    side is empty. What a judge must reach on a corpus of known templates before it may decide."""
    if not good or not flawed:
        return None
    wins = sum((g > f) + 0.5 * (g == f) for g in good for f in flawed)
    return wins / (len(good) * len(flawed))


def panel_agreement(judgements: Sequence[TemplateJudgement]) -> float | None:
    """Krippendorff's alpha (interval) of the panel over every (template, criterion) unit."""
    judges = sorted({s.judge for j in judgements for s in j.scores})
    units = [(j.template_id, c) for j in judgements for c in dict.fromkeys(s.criterion for s in j.scores)]
    column = {unit: i for i, unit in enumerate(units)}
    matrix = np.full((len(judges), len(units)), np.nan)
    for j in judgements:
        for s in j.scores:
            if s.score is not None:
                matrix[judges.index(s.judge), column[(j.template_id, s.criterion)]] = s.score
    return krippendorff_alpha_interval(matrix)
