"""Student pool: answer parsing, scripted chat students, the log-likelihood mode, vision, the blind flag."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from itemsmith.items.schema import Item
from itemsmith.verification.answer_parsing import parse_answer
from itemsmith.verification.irt import calibrate
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import (
    PoolConfig,
    Student,
    StudentConfig,
    aanswer_templates,
    answer_template,
    responses_frame,
    student_prompt,
)


class RuleChat(BaseChatModel):
    """A scripted chat model: the reply is a function of the last message's text; calls are logged."""

    rule: Callable[[str], str]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "rule-scripted"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        with self._lock:
            self.calls.append(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.rule(messages[-1].text)))])


def item(question: str, answer_index: int, n_options: int = 4, series: bool = True) -> Item:
    options = ["rises", "falls", "stays flat", "oscillates", "jumps", "drifts"][:n_options]
    data = {"question": question, "options": options, "answer_index": answer_index}
    if series:
        data["series"] = [{"name": "value", "values": [1.0, 2.0, 3.0, 4.0]}]
    return Item.model_validate(data)


def sample(template_id: str = "t1", n: int = 6, series: bool = True) -> TemplateSample:
    return TemplateSample(template_id=template_id, task="trend questions",
                          items=[item(f"Question {i}: which way does it go?", i % 4, series=series) for i in range(n)])


KEY = {f"Question {i}: which way does it go?": "ABCD"[i % 4] for i in range(20)}


def key_of(prompt: str) -> str:
    return next(letter for question, letter in KEY.items() if question in prompt)


def wrong_of(prompt: str) -> str:
    return "ABCD"[("ABCD".index(key_of(prompt)) + 1) % 4]


def knows(prompt: str) -> str:
    return f"The series rises steadily.\nAnswer: ({key_of(prompt)})"


def knows_only_with_series(prompt: str) -> str:
    return f"Answer: {key_of(prompt) if 'Series:' in prompt else wrong_of(prompt)}"


def student(name: str, rank: int, rule: Callable[[str], str], **config: Any) -> Student:
    return Student(StudentConfig(name=name, rank=rank, model=f"scripted:{name}", **config), RuleChat(rule=rule))


# --- answer parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "letter"), [
    ("Answer: (C)", "C"), ("C)", "C"), ("the answer is C", "C"), ("**C**", "C"), ("c", "C"),
    ("Answer: c", "C"), ("The answer is C because the trend rises.", "C"), ("C) because it rises", "C"),
    ("Final answer: **D**", "D"), ("I think A. No wait, the answer is B.", "B"), ("The correct option is B.", "B"),
    ("I choose (d)", "D"), ("The answer is: Option C", "C"), ("ANSWER:B", "B"), ("My answer: [B]", "B"),
    ("The answer is (a).", "A"), ("It must be option C.", "C"),
    ("A) up\nB) down\nC) flat\nAnswer: B", "B"),  # the cue wins over restated options
])
def test_parse_answer_reads_one_final_letter(reply, letter):
    parsed = parse_answer(reply, 4)
    assert parsed.letter == letter and parsed.index == "ABCD".index(letter) and parsed.parsed


@pytest.mark.parametrize(("reply", "why"), [
    ("", "empty"),
    ("the answer is a rising trend", "no answer letter"),  # an article, not option A
    ("A) up\nB) down\nC) flat", "several letters"),  # restating the options earns nothing
    ("Looking at (B) and (C), both could fit.", "several letters"),
    ("Answer: C or D", "alternatives"),
    ("Answer: C/D", "alternatives"),
    ("Answer: E", "not among the 4 options"),
    ("rises", "no answer letter"),  # option text is never matched
])
def test_parse_answer_rejects_what_is_not_one_letter(reply, why):
    parsed = parse_answer(reply, 4)
    assert parsed.index is None and why in parsed.how


# --- chat students ----------------------------------------------------------------------------


def test_scripted_students_answer_every_item_with_a_fixed_prompt():
    strong = student("strong", 2, knows)
    weak = student("weak", 1, lambda p: "Answer: A")
    report = answer_template(sample(n=4), [strong, weak], PoolConfig(blind=False))
    assert report.n_items == 4 and report.chance == 0.25 and report.blind is None
    assert len(report.responses) == 8
    assert report.accuracies() == {"strong": 1.0, "weak": 0.25}
    first = next(r for r in report.responses if r.student == "strong" and r.item_index == 2)
    assert first.choice == 2 and first.correct and first.rank == 2 and "Answer: (C)" in first.raw
    prompt = strong.model.calls[0][-1].text
    assert "Series: value" in prompt and "A) rises" in prompt and "Answer: X" in prompt
    assert strong.model.calls[0][0].type == "system"


def test_scripted_unparsed_replies_are_recorded_as_wrong_with_their_text():
    copies_options = student("copier", 1, lambda p: "A) rises\nB) falls\nC) stays flat\nD) oscillates")
    report = answer_template(sample(n=3), [copies_options, student("ok", 2, knows)], PoolConfig(blind=False))
    copied = [r for r in report.responses if r.student == "copier"]
    assert all(r.choice is None and not r.correct and "B) falls" in r.raw for r in copied)


def test_scripted_fake_list_and_generic_models_plug_in():
    replies = ["Answer: A", "Answer: B", "Answer: C"]
    pool = [Student(StudentConfig(name="list", rank=1), FakeListChatModel(responses=replies)),
            Student(StudentConfig(name="generic", rank=2),
                    GenericFakeChatModel(messages=iter(AIMessage(r) for r in replies)))]
    report = answer_template(sample(n=3), pool, PoolConfig(blind=False, max_concurrency=1))
    for name in ("list", "generic"):
        assert [r.choice for r in report.responses if r.student == name] == [0, 1, 2]


def test_scripted_vision_student_gets_a_png_plot_but_not_when_blind():
    seen = student("vision", 1, knows, vision=True)
    answer_template(sample(n=1), [seen, student("other", 2, knows)], PoolConfig(blind=True, max_concurrency=1))
    with_series, blind = (call[-1] for call in seen.model.calls)
    blocks = with_series.content
    image = next(b for b in blocks if b["type"] == "image")
    assert image["mime_type"] == "image/png" and base64.b64decode(image["base64"]).startswith(b"\x89PNG")
    assert isinstance(blind.content, str) and "Series:" not in blind.content and "not shown" in blind.content


def test_prompt_uses_the_students_text_format():
    config = StudentConfig(name="s", rank=1, text_format="csv", decimals=1)
    text = student_prompt(item("Q?", 0), config)
    assert "Index,Value\n0,1.0" in text
    assert "Series:" not in student_prompt(item("Q?", 0), config, blind=True)


# --- the blind condition ----------------------------------------------------------------------


def test_scripted_blind_flag_when_items_are_answered_as_well_without_the_series():
    pool = [student("a", 1, knows), student("b", 2, knows)]
    report = answer_template(sample(n=6), pool)
    assert report.blind is not None and report.blind.flagged
    assert report.blind.accuracy_blind == report.blind.accuracy_with_series == 1.0
    assert report.blind.n_blind == 12 and report.blind.p_value < 0.05
    assert sum(r.blind for r in report.responses) == 12
    assert "not needed" in report.blind.reason


def test_scripted_no_blind_flag_when_the_series_is_needed():
    pool = [student("a", 1, knows_only_with_series), student("b", 2, knows_only_with_series)]
    report = answer_template(sample(n=6), pool)
    assert report.blind is not None and not report.blind.flagged
    assert report.blind.accuracy_with_series == 1.0 and report.blind.accuracy_blind == 0.0
    assert report.accuracies(blind=True) == {"a": 0.0, "b": 0.0}


def test_scripted_blind_accuracy_at_chance_is_not_flagged_even_if_as_good():
    pool = [student("a", 1, lambda p: "Answer: A"), student("b", 2, lambda p: "Answer: A")]
    report = answer_template(sample(n=8), pool)
    assert report.blind is not None and not report.blind.flagged and "not above chance" in report.blind.reason


# --- the log-likelihood mode ------------------------------------------------------------------


class ScriptedScorer:
    """A LetterScorer that scores the key highest (or a fixed table), recording prompts."""

    def __init__(self, table: Mapping[str, float] | None = None) -> None:
        self.table, self.prompts = table, []

    def score_letters(self, prompt: str, letters: Sequence[str]) -> Mapping[str, float]:
        self.prompts.append(prompt)
        if self.table is not None:
            return self.table
        return {letter: (-0.1 if letter == key_of(prompt) else -3.0) for letter in letters}


def test_scripted_loglik_student_picks_the_most_likely_letter():
    scorer = ScriptedScorer()
    report = answer_template(sample(n=4), [Student(StudentConfig(name="local", rank=1), scorer),
                                           student("chat", 2, knows)], PoolConfig(blind=False))
    local = [r for r in report.responses if r.student == "local"]
    assert all(r.correct for r in local) and "A=" in local[0].raw
    assert scorer.prompts[0].rstrip().endswith("Answer:")


def test_scripted_loglik_student_reads_an_items_blind_prompt_right_after_its_series_prompt():
    """The two prompts of an item share everything up to the series, and the blind one comes
    next on the same model (a local model then reads only the note); a chat student still reads
    the series before the question; the report keeps its order (with the series first)."""
    scorers = {name: ScriptedScorer() for name in ("small", "large")}
    chat = student("chat", 3, knows)
    pool = [Student(StudentConfig(name=name, rank=rank), scorers[name]) for rank, name in ((1, "small"), (2, "large"))]
    report = answer_template(sample(n=5), [*pool, chat])
    for scorer in scorers.values():
        prompts = scorer.prompts
        assert len(prompts) == 10
        for index, (seen, blind) in enumerate(zip(prompts[::2], prompts[1::2], strict=True)):
            assert f"Question {index}:" in seen and "Series: value" in seen and "Series" not in blind
            shared = seen[:seen.index("Series: value")]
            assert shared.endswith("D) oscillates\n\n") and blind.startswith(shared)
            assert seen.index("Question") < seen.index("Series") and "not shown" in blind
    first_chat = chat.model.calls[0][-1].text
    assert first_chat.index("Series: value") < first_chat.index("Question")
    assert [(r.blind, r.student, r.item_index) for r in report.responses] == [
        (blind, name, index) for blind in (False, True) for name in ("small", "large", "chat") for index in range(5)]


@pytest.mark.parametrize("table", [{"A": -1.0, "B": -2.0}, {"A": -1.0, "B": float("nan"), "C": -2.0, "D": -3.0},
                                   {"A": -1.0, "B": -1.0, "C": -2.0, "D": -3.0}])
def test_scripted_loglik_without_a_usable_best_letter_records_no_choice(table):
    report = answer_template(sample(n=1), [Student(StudentConfig(name="local", rank=1), ScriptedScorer(table)),
                                           student("chat", 2, knows)], PoolConfig(blind=False))
    local = next(r for r in report.responses if r.student == "local")
    assert local.choice is None and not local.correct


# --- pool plumbing ----------------------------------------------------------------------------


def test_scripted_many_templates_async_and_the_irt_frame():
    pool = [student("weak", 1, lambda p: "Answer: A"), student("mid", 2, knows_only_with_series),
            student("strong", 3, knows)]
    samples = [sample(f"t{j}", n=4) for j in range(3)]
    reports = asyncio.run(aanswer_templates(samples, pool, PoolConfig(max_concurrency=3)))
    assert [r.template_id for r in reports] == ["t0", "t1", "t2"]
    frame = responses_frame(reports)
    assert list(frame.columns) == ["template_id", "student", "instance", "correct"]
    assert len(frame) == 3 * 3 * 4  # blind responses are left out
    table = calibrate(frame)
    assert set(table.index) == {"t0", "t1", "t2"}


def test_pool_is_validated():
    with pytest.raises(ValueError, match="empty"):
        answer_template(sample(), [])
    with pytest.raises(ValueError, match="unique"):
        answer_template(sample(), [student("x", 1, knows), student("x", 2, knows)])
    with pytest.raises(TypeError, match="LetterScorer"):
        answer_template(sample(), [Student(StudentConfig(name="x", rank=1), object())])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        StudentConfig(name="x", rank=1, temperature=0)
