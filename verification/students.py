"""The student pool: models of declared capability answer every sampled item.

Each student is a `StudentConfig` (model spec, capability rank, text format, vision) and the
model behind it, either

- a LangChain chat model (``chat`` mode): it gets a fixed prompt (the item rendered in the
  student's text format, plus a plot of the series for vision students) and its reply is parsed
  to one final letter by `verification.answer_parsing.parse_answer` (letters only, never option
  texts); an unparsed reply is recorded with ``choice=None`` and counts as wrong; or
- a `LetterScorer` (``loglik`` mode, for local models): it returns the log-probability of each
  option letter after the prompt (question and options first, then the series), and the
  student's choice is the most likely letter. Such a student answers an item's two conditions
  one after the other, so the blind prompt reuses the evaluation of the question.

With ``blind=True`` every student also answers every item with the series removed. A template
whose items are answered about as well blind as with the series, and clearly above chance
blind, is flagged: its data is not needed (`BlindCheck`).

A call that gave no usable reply (the model raised `verification.calls.ModelCallFailed`: it
failed, came back empty or was cut) is not a response: it is listed in the report's ``failed``,
never counted as a wrong answer, never handed to the cache (a rerun asks it again).

An `AnswerCache` passed to the pool is asked before each item is put to a student: a stored
response to the same `StudentCall` is reused and no model is called; a fresh response is handed
to it to store (see `templates_bank.reverification`).
"""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, cast, runtime_checkable

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import binomtest

from itemsmith.items.rendering import TextFormat, option_letter, render_item
from itemsmith.items.schema import Item, StudentResponse
from itemsmith.sandbox.render import render_item_png
from itemsmith.verification.answer_parsing import parse_answer
from itemsmith.verification.calls import FailedCall, ModelCallFailed
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.stage_configs import PoolConfig

__all__ = [
    "AnswerCache", "BlindCheck", "LetterScorer", "PoolConfig", "Student", "StudentCall", "StudentConfig",
    "StudentReport", "aanswer_template", "aanswer_templates", "answer_template", "answer_templates",
    "responses_frame", "student_prompt",
]

STUDENT_SYSTEM = ("You are taking a multiple-choice exam about time-series data. Read the data and the "
                  "question, choose the single best option, and end your reply with a line "
                  "'Answer: X', where X is the option's letter.")
_BLIND_NOTE = "(The data for this question is not shown. Answer as well as you can.)"

AnswerMode = Literal["chat", "loglik"]


@runtime_checkable
class LetterScorer(Protocol):
    """A local model that scores option letters: the log-probability of each letter as the next
    token after ``prompt`` (which ends with ``"Answer:"``). A llama.cpp model implements this
    with one forward pass; missing or non-finite values mean "no score"."""

    def score_letters(self, prompt: str, letters: Sequence[str]) -> Mapping[str, float]: ...


class StudentConfig(BaseModel):
    """One student: the model spec it was built from, its declared capability rank (larger is
    more capable; equal ranks are allowed) and how it is shown items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    rank: int
    model: str | None = Field(None, description="provider spec the model was built from, for the record")
    text_format: TextFormat = TextFormat.plain
    decimals: int = Field(2, ge=0, le=10)
    vision: bool = Field(False, description="also send a PNG plot of the series (chat mode only)")


@dataclass(frozen=True)
class Student:
    """A configured student and its model (a chat model or a `LetterScorer`)."""

    config: StudentConfig
    model: BaseChatModel | LetterScorer

    @property
    def mode(self) -> AnswerMode:
        if isinstance(self.model, BaseChatModel):
            return "chat"
        if isinstance(self.model, LetterScorer):
            return "loglik"
        raise TypeError(f"student {self.config.name!r}: the model must be a LangChain chat model or a "
                        f"LetterScorer, got {type(self.model).__name__}")


@dataclass(frozen=True)
class StudentCall:
    """One item put to one student: what a cached response must match. ``prompt`` is the text
    the model reads (system instruction and item); a vision student also gets the plot, which
    follows from the item."""

    student: StudentConfig
    mode: AnswerMode
    template_id: str
    item: Item
    item_index: int
    blind: bool
    prompt: str


class AnswerCache(Protocol):
    """Stored student responses. `get` returns a stored response to the same call (the model is
    then not called), or None; `put` receives every fresh response."""

    def get(self, call: StudentCall) -> StudentResponse | None: ...

    def put(self, call: StudentCall, response: StudentResponse) -> None: ...


class BlindCheck(BaseModel):
    """Accuracy with and without the series, pooled over students."""

    accuracy_with_series: float
    accuracy_blind: float
    chance: float
    n_with_series: int
    n_blind: int
    p_value: float = Field(description="one-sided binomial test that blind accuracy exceeds chance")
    flagged: bool
    reason: str


class StudentReport(BaseModel):
    """Every student's response to every sampled item of one template (and the blind check)."""

    template_id: str
    responses: list[StudentResponse]
    chance: float = Field(description="mean of 1 / number of options over the items")
    n_items: int
    blind: BlindCheck | None = None
    failed: list[FailedCall] = Field(default_factory=list, description="calls with no usable reply: not responses")

    def accuracies(self, blind: bool = False) -> dict[str, float]:
        """Accuracy per student (unparsed replies count as wrong)."""
        out: dict[str, list[bool]] = {}
        for r in self.responses:
            if r.blind == blind:
                out.setdefault(r.student, []).append(r.correct)
        return {student: sum(v) / len(v) for student, v in out.items()}


# --- prompts --------------------------------------------------------------------------------


def student_prompt(item: Item, config: StudentConfig, blind: bool = False, mode: AnswerMode = "chat") -> str:
    """The fixed prompt text for one item (without the system instruction). A chat student reads
    the series first, as `render_item` lays an item out; a log-likelihood student reads the
    question and options first, then the series (blind: the note that it is not shown), so on a
    local model an item's blind prompt reuses the evaluation of everything before its series."""
    series_last = mode == "loglik"
    body = render_item(item, config.text_format, config.decimals, include_series=not blind, series_last=series_last)
    note = _BLIND_NOTE if blind and item.series else ""
    end = f"End with 'Answer: X', X being one of {', '.join(_letters(item))}."
    return "\n\n".join(part for part in ([body, note] if series_last else [note, body]) + [end] if part)


def _letters(item: Item) -> list[str]:
    return [option_letter(i) for i in range(len(item.options))]


def _chat_messages(item: Item, config: StudentConfig, blind: bool) -> list[BaseMessage]:
    text = student_prompt(item, config, blind)
    if config.vision and item.series and not blind:
        image = base64.b64encode(render_item_png(item)).decode("ascii")  # drawn by the plot worker
        content: list[str | dict] = [{"type": "text", "text": text},
                                     {"type": "image", "base64": image, "mime_type": "image/png"}]
        return [SystemMessage(STUDENT_SYSTEM), HumanMessage(content=content)]
    return [SystemMessage(STUDENT_SYSTEM), HumanMessage(text)]


# --- answering, one function per mode -------------------------------------------------------


async def _answer_chat(student: Student, item: Item, blind: bool) -> tuple[str, int | None]:
    message = await cast(BaseChatModel, student.model).ainvoke(_chat_messages(item, student.config, blind))
    raw = message.text
    parsed = parse_answer(raw, len(item.options))
    return raw, parsed.index


async def _answer_loglik(student: Student, item: Item, blind: bool) -> tuple[str, int | None]:
    scorer = cast(LetterScorer, student.model)
    prompt = f"{STUDENT_SYSTEM}\n\n{student_prompt(item, student.config, blind, 'loglik')}\n\nAnswer:"
    letters = _letters(item)
    scores = await asyncio.to_thread(scorer.score_letters, prompt, letters)
    usable = {letter: float(scores[letter]) for letter in letters
              if letter in scores and math.isfinite(float(scores[letter]))}
    raw = "letter log-probabilities: " + ", ".join(f"{k}={v:.4f}" for k, v in usable.items())
    if len(usable) != len(letters):
        missing = [letter for letter in letters if letter not in usable]
        return f"{raw}; no score for {', '.join(missing)}", None
    best = max(usable, key=lambda letter: usable[letter])
    if sum(1 for v in usable.values() if v == usable[best]) > 1:
        return f"{raw}; tie for the best letter", None
    return raw, letters.index(best)


_ANSWERERS: dict[AnswerMode, Callable[[Student, Item, bool], Awaitable[tuple[str, int | None]]]] = {
    "chat": _answer_chat,
    "loglik": _answer_loglik,
}


async def _respond(student: Student, item: Item, index: int, blind: bool,
                   limit: asyncio.Semaphore) -> StudentResponse | FailedCall:
    try:
        async with limit:
            raw, choice = await _ANSWERERS[student.mode](student, item, blind)
    except ModelCallFailed as exc:
        return FailedCall(model=student.config.name, outcome=exc.outcome, error=str(exc), item_index=index,
                          blind=blind)
    return StudentResponse(student=student.config.name, rank=student.config.rank, item_index=index, blind=blind,
                           raw=raw, choice=choice, correct=choice == item.answer_index)


async def _cached_respond(student: Student, template_id: str, item: Item, index: int, blind: bool,
                          limit: asyncio.Semaphore, cache: AnswerCache | None) -> StudentResponse | FailedCall:
    if cache is None:
        return await _respond(student, item, index, blind, limit)
    call = StudentCall(student.config, student.mode, template_id, item, index, blind,
                       f"{STUDENT_SYSTEM}\n\n{student_prompt(item, student.config, blind, student.mode)}")
    stored = cache.get(call)
    if stored is not None:
        return stored
    response = await _respond(student, item, index, blind, limit)
    if isinstance(response, StudentResponse):
        cache.put(call, response)
    return response


def _blind_check(responses: list[StudentResponse], chance: float, config: PoolConfig) -> BlindCheck:
    seen = [r for r in responses if not r.blind]
    blind = [r for r in responses if r.blind]
    k_blind = sum(r.correct for r in blind)
    acc_with = sum(r.correct for r in seen) / len(seen)
    acc_blind = k_blind / len(blind)
    p_value = float(binomtest(k_blind, len(blind), chance, alternative="greater").pvalue)
    as_well = acc_blind >= acc_with - config.blind_margin
    above_chance = p_value < config.blind_alpha
    flagged = as_well and above_chance
    if flagged:
        reason = (f"answered as well without the series ({acc_blind:.2f}) as with it ({acc_with:.2f}), above "
                  f"chance {chance:.2f} (p={p_value:.3f}): the data is not needed")
    elif not above_chance:
        reason = f"blind accuracy {acc_blind:.2f} is not above chance {chance:.2f} (p={p_value:.3f})"
    else:
        reason = f"the series helps: {acc_with:.2f} with it, {acc_blind:.2f} without"
    return BlindCheck(accuracy_with_series=acc_with, accuracy_blind=acc_blind, chance=chance,
                      n_with_series=len(seen), n_blind=len(blind), p_value=p_value, flagged=flagged, reason=reason)


def _checked(students: Sequence[Student], config: PoolConfig | None) -> PoolConfig:
    if not students:
        raise ValueError("the student pool is empty")
    names = [s.config.name for s in students]
    if len(set(names)) != len(names):
        raise ValueError(f"student names must be unique, got {names}")
    for s in students:
        _ = s.mode  # raises for a model of neither kind
    return config or PoolConfig()


async def _answer(sample: TemplateSample, students: Sequence[Student], config: PoolConfig,
                  limit: asyncio.Semaphore, cache: AnswerCache | None,
                  on_answer: Callable[[], None] | None = None) -> StudentReport:
    conditions = (False, True) if config.blind else (False,)

    async def respond(student: Student, index: int, item: Item, blind: bool) -> StudentResponse | FailedCall:
        result = await _cached_respond(student, sample.template_id, item, index, blind, limit, cache)
        if on_answer is not None:
            on_answer()
        return result

    in_turn = {student.config.name: asyncio.Lock() for student in students if student.mode == "loglik"}

    async def respond_both(student: Student, index: int, item: Item) -> list[StudentResponse | FailedCall]:
        if student.config.name in in_turn:  # one after the other: the blind prompt reuses the question's evaluation
            async with in_turn[student.config.name]:
                return [await respond(student, index, item, blind) for blind in conditions]
        return list(await asyncio.gather(*(respond(student, index, item, blind) for blind in conditions)))

    pairs = await asyncio.gather(*(respond_both(student, index, item) for student in students
                                   for index, item in enumerate(sample.items)))
    results = [pair[condition] for condition in range(len(conditions)) for pair in pairs]
    responses = [r for r in results if isinstance(r, StudentResponse)]
    failed = [r for r in results if isinstance(r, FailedCall)]
    chance = sum(1 / len(item.options) for item in sample.items) / len(sample.items)
    both = {r.blind for r in responses} == {False, True}  # a condition without answers has no accuracy
    check = _blind_check(responses, chance, config) if config.blind and both else None
    return StudentReport(template_id=sample.template_id, responses=responses, chance=chance,
                         n_items=len(sample.items), blind=check, failed=failed)


async def aanswer_template(sample: TemplateSample, students: Sequence[Student], config: PoolConfig | None = None,
                           *, cache: AnswerCache | None = None, limit: asyncio.Semaphore | None = None
                           ) -> StudentReport:
    """Every student answers every item of one template (and blind, if configured); async.
    `limit` bounds the calls in flight together with other templates' (default: a limit of this
    template's own, `config.max_concurrency`)."""
    config = _checked(students, config)
    return await _answer(sample, students, config, limit or asyncio.Semaphore(config.max_concurrency), cache)


async def aanswer_templates(samples: Sequence[TemplateSample], students: Sequence[Student],
                            config: PoolConfig | None = None, *, cache: AnswerCache | None = None,
                            on_answer: Callable[[], None] | None = None) -> list[StudentReport]:
    """`aanswer_template` for several templates, sharing one concurrency limit; results in order.
    ``on_answer`` is called after each answer (asked, reused or failed), for progress."""
    config = _checked(students, config)
    limit = asyncio.Semaphore(config.max_concurrency)
    return list(await asyncio.gather(*(_answer(sample, students, config, limit, cache, on_answer)
                                       for sample in samples)))


def answer_template(sample: TemplateSample, students: Sequence[Student], config: PoolConfig | None = None, *,
                    cache: AnswerCache | None = None) -> StudentReport:
    """Synchronous `aanswer_template` (not from inside a running event loop)."""
    return asyncio.run(aanswer_template(sample, students, config, cache=cache))


def answer_templates(samples: Sequence[TemplateSample], students: Sequence[Student],
                     config: PoolConfig | None = None, *, cache: AnswerCache | None = None) -> list[StudentReport]:
    """Synchronous `aanswer_templates` (not from inside a running event loop)."""
    return asyncio.run(aanswer_templates(samples, students, config, cache=cache))


def responses_frame(reports: Sequence[StudentReport]) -> pd.DataFrame:
    """The with-series responses as the table `verification.irt.calibrate` reads:
    ``template_id``, ``student``, ``instance`` (the item index), ``correct`` (0/1)."""
    rows = [{"template_id": report.template_id, "student": r.student, "instance": r.item_index,
             "correct": int(r.correct)} for report in reports for r in report.responses if not r.blind]
    return pd.DataFrame(rows, columns=["template_id", "student", "instance", "correct"])
