"""Judge panel: G-Eval scoring (log-probabilities and sampling), retries, missing scores,
aggregation, decisions and Krippendorff's alpha."""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from itemsmith.items.schema import Item
from itemsmith.verification.judges import (
    ChatScoreReader,
    CriterionThreshold,
    Judge,
    JudgeConfig,
    PanelConfig,
    ajudge_templates,
    judge_prompt,
    judge_template,
    krippendorff_alpha_interval,
    panel_agreement,
    parse_score,
    weighted_score,
)
from itemsmith.verification.samples import TemplateSample

CRITERION_RE = re.compile(r"Criterion: ([a-z ]+)\.")


class RuleChat(BaseChatModel):
    """A scripted chat model: the reply (text or AIMessage) is a function of the prompt and the
    bound keyword arguments; every call is logged."""

    rule: Callable[[str, dict[str, Any]], str | AIMessage]
    calls: list[tuple[str, dict[str, Any]]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "rule-scripted"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        prompt = messages[-1].text
        with self._lock:
            self.calls.append((prompt, kwargs))
        reply = self.rule(prompt, kwargs)
        message = reply if isinstance(reply, AIMessage) else AIMessage(reply)
        return ChatResult(generations=[ChatGeneration(message=message)])


def criterion_of(prompt: str) -> str:
    return CRITERION_RE.search(prompt).group(1).replace(" ", "_")


def scores_by_criterion(table: dict[str, int]) -> Callable[[str, dict[str, Any]], str]:
    return lambda prompt, kwargs: f"The steps check out for this template.\nScore: {table[criterion_of(prompt)]}"


GOOD = {"relevance": 9, "unambiguity": 8, "specificity": 7, "solvability": 8, "needs_series": 9}


def sample(template_id: str = "t1", points: int = 20) -> TemplateSample:
    items = [Item(question=f"Does series {i} rise?", options=["yes", "no"], answer_index=i % 2, kind="tf",
                  rationale="compare the last value with the first",
                  series=[{"name": "value", "values": [float(v) for v in range(points)], "unit": "m"}])
             for i in range(4)]
    return TemplateSample(template_id=template_id, items=items, task="trend questions about river levels",
                          dataset="hourly river levels in metres")


def judge(name: str, rule: Callable[[str, dict[str, Any]], str | AIMessage], **config: Any) -> Judge:
    return Judge(JudgeConfig(name=name, family=name.split("-")[0], **config), RuleChat(rule=rule))


def logprob_reply(text: str, score_alternatives: dict[str, float]) -> AIMessage:
    """An OpenAI-style reply whose tokens are words and whose score token has top logprobs."""
    tokens = re.findall(r"\s*\S+|\s+", text)
    content = []
    for token in tokens:
        entry: dict[str, Any] = {"token": token, "logprob": -0.01, "bytes": list(token.encode()), "top_logprobs": []}
        if token.strip() in score_alternatives and token is tokens[-1]:
            entry["top_logprobs"] = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                                     for t, p in score_alternatives.items()]
        content.append(entry)
    return AIMessage(text, response_metadata={"logprobs": {"content": content, "refusal": None}})


# --- scoring paths ----------------------------------------------------------------------------


def test_scripted_panel_accepts_a_good_template_and_keeps_every_rationale():
    panel = [judge("openai-a", scores_by_criterion(GOOD)), judge("anthropic-b", scores_by_criterion(GOOD))]
    result = judge_template(sample(), panel)
    assert result.passed and result.decision.stage == "judges"
    assert len(result.scores) == 10
    assert all(s.score == GOOD[s.criterion] and s.method == "samples" and s.samples == [GOOD[s.criterion]] * 3
               for s in result.scores)
    assert all(s.rationale == "The steps check out for this template." for s in result.scores)
    assert {a.criterion: a.mean for a in result.aggregates} == GOOD
    assert result.agreement == pytest.approx(1.0)


def test_scripted_low_criterion_fails_the_template_with_a_reason():
    low = dict(GOOD, needs_series=3)
    result = judge_template(sample(), [judge("a", scores_by_criterion(GOOD)), judge("b", scores_by_criterion(low))])
    assert not result.passed
    failed = [a for a in result.aggregates if not a.passed]
    assert [a.criterion for a in failed] == ["needs_series"]
    assert failed[0].mean == 6.0 and failed[0].min == 3.0
    assert result.decision.reasons == [failed[0].reason] and "needs_series" in failed[0].reason


def test_thresholds_are_per_criterion():
    config = PanelConfig(thresholds={"specificity": CriterionThreshold(mean=7.5, min=7)})
    result = judge_template(sample(), [judge("a", scores_by_criterion(GOOD))], config)
    assert [a.criterion for a in result.aggregates if not a.passed] == ["specificity"]
    with pytest.raises(ValueError, match="not scored"):
        PanelConfig(criteria=("relevance",), thresholds={"specificity": CriterionThreshold()})


def test_scripted_logprobs_give_a_probability_weighted_score():
    def rule(prompt: str, kwargs: dict[str, Any]) -> AIMessage:
        return logprob_reply("It is relevant to river levels.\nScore: 8", {"8": 0.6, "7": 0.3, "9": 0.05, "the": 0.05})

    scored = judge("local-a", rule, logprobs=True, top_logprobs=5, samples=3)
    result = judge_template(sample(), [scored], PanelConfig(criteria=("relevance",)))
    score = result.scores[0]
    assert score.method == "logprobs" and score.attempts == 1 and score.samples == [8.0]
    assert score.score == pytest.approx((8 * 0.6 + 7 * 0.3 + 9 * 0.05) / 0.95)
    assert score.rationale == "It is relevant to river levels."
    assert scored.model.calls[0][1] == {"logprobs": True, "top_logprobs": 5}


def test_scripted_logprobs_absent_fall_back_to_the_mean_of_samples():
    replies = iter(["Score: 6", "Score: 8", "Score: 7"])
    scored = judge("anthropic-a", lambda prompt, kwargs: next(replies), logprobs=True, samples=3)
    score = judge_template(sample(), [scored], PanelConfig(criteria=("relevance",), max_concurrency=1)).scores[0]
    assert score.method == "samples" and score.samples == [6.0, 8.0, 7.0] and score.score == 7.0
    assert score.attempts == 3
    assert scored.model.calls[0][1] == {"logprobs": True, "top_logprobs": 10}
    assert scored.model.calls[1][1] == {}  # later samples are drawn unbound


def test_scripted_malformed_reply_is_retried():
    model = GenericFakeChatModel(messages=iter(["It looks fine to me.", "On reflection.\nScore: 7"]))
    panel = [Judge(JudgeConfig(name="generic", samples=1, max_retries=2), model)]
    score = judge_template(sample(), panel, PanelConfig(criteria=("solvability",))).scores[0]
    assert score.score == 7.0 and score.attempts == 2 and score.error is None


def test_scripted_reply_that_never_parses_is_missing_not_zero():
    bad = iter(["Score: eleven", "Score: 0", "Score: 11", "no idea"])
    broken = judge("broken", lambda prompt, kwargs: next(bad), samples=1, max_retries=2)
    good = judge("good", scores_by_criterion(GOOD))
    config = PanelConfig(criteria=("relevance",), max_concurrency=1)
    result = judge_template(sample(), [broken, good], config)
    missing = next(s for s in result.scores if s.judge == "broken")
    assert missing.score is None and missing.attempts == 3 and "Score: 11" in missing.error
    aggregate = result.aggregates[0]
    assert aggregate.n_missing == 1 and aggregate.n_scores == 1 and aggregate.mean == 9.0
    assert not result.passed and "only 1 of 2 judges" in result.decision.reasons[0]  # every judge by default ...
    assert not result.failed_calls  # replies arrived: a rejection, not a failed call

    bad = iter(["nothing"] * 3)
    broken = judge("broken", lambda prompt, kwargs: next(bad), samples=1, max_retries=2)
    lowered = PanelConfig(criteria=("relevance",), min_judges=1)
    result = judge_template(sample(), [broken, judge("good", scores_by_criterion(GOOD))], lowered)
    assert result.passed  # ... unless the user lowers it


def test_scripted_some_samples_missing_average_the_rest():
    replies = iter(["Score: 6", "???", "!!!", "Score: 8"])
    scored = judge("a", lambda prompt, kwargs: next(replies), samples=2, max_retries=2)
    score = judge_template(sample(), [scored], PanelConfig(criteria=("relevance",), max_concurrency=1)).scores[0]
    assert score.samples == [6.0, 8.0] and score.score == 7.0 and score.attempts == 4


def test_scripted_model_errors_propagate():
    def rule(prompt: str, kwargs: dict[str, Any]) -> str:
        raise ConnectionError("provider down")

    with pytest.raises(ConnectionError):
        judge_template(sample(), [judge("a", rule)], PanelConfig(criteria=("relevance",)))


def test_scripted_async_panel_over_several_templates():
    panel = [judge("a", scores_by_criterion(GOOD)), judge("b", scores_by_criterion(dict(GOOD, relevance=3)))]
    results = asyncio.run(ajudge_templates([sample("t1"), sample("t2")], panel))
    assert [r.template_id for r in results] == ["t1", "t2"]
    assert all(not r.passed for r in results)
    alpha = panel_agreement(results)
    matrix = [[GOOD[c] for c in GOOD] * 2, [dict(GOOD, relevance=3)[c] for c in GOOD] * 2]
    assert alpha == pytest.approx(krippendorff_alpha_interval(matrix))


# --- prompt and parsing -----------------------------------------------------------------------


def test_prompt_shows_task_items_key_and_rationale_and_downsamples_long_series():
    messages = judge_prompt(sample(points=500), "solvability", PanelConfig(items_per_prompt=2, max_series_points=50))
    text = messages[-1].text
    assert messages[0].type == "system"
    assert "trend questions about river levels" in text and "hourly river levels" in text
    assert "Criterion: solvability." in text and "Evaluation steps:" in text
    assert text.count("### Question") == 2 and "Keyed answer: A) yes" in text
    assert "How the template computed it: compare the last value" in text
    assert "value: 50 of 500 values, evenly spaced" in text  # the shared rule (rendering.downsample_item)
    # compact: the kept positions on one line (uneven: the extremes are added), the values on the next
    times = [line for line in text.splitlines() if line.startswith("Time: ")]
    values = [line for line in text.splitlines() if line.startswith("Value: ")]
    assert len(times) == len(values) == 2
    assert times[0].startswith("Time: 0, ") and times[0].endswith(", 499") and "Time: 0, 1," not in times[0]
    assert values[0].startswith("Value: 0.00, ") and values[0].endswith(", 499.00")
    assert len(times[0].split(", ")) == len(values[0].split(", ")) == 50
    assert text.rstrip().endswith('"Score: N", where N is an integer from 1 (worst) to 10 (best).')


@pytest.mark.parametrize(("reply", "score"), [
    ("Reasoning.\nScore: 7", 7), ("**Score:** 9", 9), ("score = 10", 10), ("Score: 7/10", 7),
    ("Score: 3 out of 10", 3), ("First Score: 4. Revised. Score: 6", 6),
    ("Score: 7.5", None), ("Score: 0", None), ("Score: 12", None), ("I rate it highly", None),
])
def test_parse_score(reply, score):
    assert parse_score(reply)[0] == score


def test_weighted_score_needs_the_score_in_one_aligned_token():
    text = "Fine.\nScore: 10"
    whole = logprob_reply(text, {"10": 0.5, "9": 0.5})
    span = parse_score(text)[2]
    assert weighted_score(text, whole.response_metadata, span) == pytest.approx(9.5)
    split = {"logprobs": {"content": [{"token": t, "logprob": 0.0, "top_logprobs": [{"token": "1", "logprob": 0.0}]}
                                      for t in ["Fine.\n", "Score", ":", " 1", "0"]]}}
    assert weighted_score(text, split, span) is None  # "10" split over two tokens
    misaligned = {"logprobs": {"content": [{"token": "Score: 10", "logprob": 0.0, "top_logprobs": []}]}}
    assert weighted_score(text, misaligned, span) is None
    assert weighted_score(text, {}, span) is None


# --- agreement --------------------------------------------------------------------------------


def test_krippendorff_alpha_interval_on_the_textbook_example():
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability': 4 coders, 12 units,
    missing values; interval alpha = 0.849."""
    nan = np.nan
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    assert krippendorff_alpha_interval(data) == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_alpha_interval_hand_computed_and_edge_cases():
    # two coders, three units: values 1,2 | 3,3 | 5,4; n = 6, D_o = (1 + 0 + 1) * 2 / 6 = 2/3,
    # D_e = sum_{i != j} (x_i - x_j)^2 / (n (n - 1)) = 2 * (6 * 64 - 18^2) / 30 = 4 -> alpha = 1 - (2/3) / 4
    assert krippendorff_alpha_interval([[1, 3, 5], [2, 3, 4]]) == pytest.approx(1 - (2 / 3) / 4)
    assert krippendorff_alpha_interval([[7, 7], [7, 7]]) is None  # no variation
    assert krippendorff_alpha_interval([[1, np.nan], [np.nan, 2]]) is None  # nothing pairable
    with pytest.raises(ValueError):
        krippendorff_alpha_interval([1, 2, 3])


def test_krippendorff_alpha_interval_matches_the_reference_package():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(7)
    for _ in range(5):
        data = rng.integers(1, 11, size=(4, 25)).astype(float)
        data[rng.random(data.shape) < 0.2] = np.nan
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
        assert krippendorff_alpha_interval(data) == pytest.approx(expected)


def test_configs_are_strict():
    with pytest.raises(ValueError):
        JudgeConfig(name="a", temperature=0.2)
    with pytest.raises(ValueError):
        PanelConfig(criteria=("relevance", "relevance"))
    with pytest.raises(ValueError, match="no judges"):
        judge_template(sample(), [])


# --- score-first judges -----------------------------------------------------------------------


class ScriptedReader:
    """A scripted `ScoreReader`: a score distribution per criterion; every prompt is logged."""

    def __init__(self, table: dict[str, dict[int, float]]) -> None:
        self.table = table
        self.prompts: list[str] = []

    async def ascore_probabilities(self, messages: list[BaseMessage]) -> dict[int, float]:
        prompt = messages[-1].text
        self.prompts.append(prompt)
        return self.table[criterion_of(prompt)]


def test_scripted_score_first_judge_is_the_probability_weighted_mean_in_one_call():
    reader = ScriptedReader({"relevance": {8: 0.6, 7: 0.3, 2: 0.05}, "solvability": {3: 0.5, 4: 0.5}})
    panel = [Judge(JudgeConfig(name="local", form="score_first"), reader)]
    result = judge_template(sample(), panel, PanelConfig(criteria=("relevance", "solvability")))
    relevance, solvability = result.scores
    assert relevance.method == "score_first" and relevance.attempts == 1 and len(reader.prompts) == 2
    assert relevance.score == pytest.approx((8 * 0.6 + 7 * 0.3 + 2 * 0.05) / 0.95)
    assert relevance.rationale.startswith("score-first distribution: P(8)=0.63")
    assert solvability.score == pytest.approx(3.5) and not result.passed
    assert all(p.rstrip().endswith('"Score: N", where N is an integer from 1 (worst) to 10 (best).')
               and "Reply with the score only" in p for p in reader.prompts)


def test_scripted_score_first_judge_with_no_mass_on_scores_is_missing_not_zero():
    reader = ScriptedReader({"relevance": {11: 0.9, 0: 0.1}})
    result = judge_template(sample(), [Judge(JudgeConfig(name="local", form="score_first"), reader)],
                            PanelConfig(criteria=("relevance",)))
    assert result.scores[0].score is None and "no probability on any score" in result.scores[0].error
    assert not result.passed


def test_judge_form_must_match_its_model():
    with pytest.raises(ValueError, match="score_first form needs a ScoreReader"):
        Judge(JudgeConfig(name="x", form="score_first"), GenericFakeChatModel(messages=iter([])))
    with pytest.raises(ValueError, match="score_first form needs a ScoreReader"):
        Judge(JudgeConfig(name="x"), ScriptedReader({}))


def test_prompt_puts_the_items_before_the_criterion_so_criteria_share_a_prefix():
    prompts = [judge_prompt(sample(), c, PanelConfig())[-1].text for c in ("relevance", "needs_series")]
    shared = prompts[0].split("\n\nCriterion: ")[0]
    assert prompts[1].startswith(shared) and "### Question 3" in shared and "Criterion" not in shared


def test_scripted_chat_score_reader_reads_the_first_score_token_of_a_short_reply():
    def rule(prompt: str, kwargs: dict[str, Any]) -> AIMessage:
        return logprob_reply("Score: 9", {"9": 0.5, "10": 0.25, "8": 0.2, "the": 0.05})

    chat = RuleChat(rule=rule)
    reader = ChatScoreReader(chat, top_logprobs=5)
    result = judge_template(sample(), [Judge(JudgeConfig(name="hosted", form="score_first"), reader)],
                            PanelConfig(criteria=("relevance",)))
    assert result.scores[0].score == pytest.approx((9 * 0.5 + 10 * 0.25 + 8 * 0.2) / 0.95)
    assert chat.calls[0][1] == {"logprobs": True, "top_logprobs": 5, "max_tokens": 4}


def test_scripted_chat_score_reader_without_logprobs_parses_the_reply():
    reader = ChatScoreReader(RuleChat(rule=lambda prompt, kwargs: "Score: 6"))
    result = judge_template(sample(), [Judge(JudgeConfig(name="hosted", form="score_first"), reader)],
                            PanelConfig(criteria=("relevance",)))
    assert result.scores[0].score == 6.0
