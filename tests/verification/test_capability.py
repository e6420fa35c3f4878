"""Capability-aligned filtering: every outcome, the blind flag, the statistic and its interval."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from scipy.stats import spearmanr

from itemsmith.items.schema import Item, StudentResponse
from itemsmith.verification.capability import (
    CapabilityConfig,
    Outcome,
    assess,
    assess_all,
    ladder_auc,
    rank_correlation,
)
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import (
    BlindCheck,
    PoolConfig,
    Student,
    StudentConfig,
    StudentReport,
    answer_template,
)


def report(pattern: dict[tuple[str, int], list[int]], chance: float = 0.25, blind: BlindCheck | None = None,
           template_id: str = "t") -> StudentReport:
    """A report from {(student, rank): [1, 0, ...]} correct patterns over the same items."""
    n_items = len(next(iter(pattern.values())))
    responses = [StudentResponse(student=name, rank=rank, item_index=i, raw="Answer: A", choice=0, correct=bool(c))
                 for (name, rank), row in pattern.items() for i, c in enumerate(row)]
    return StudentReport(template_id=template_id, responses=responses, chance=chance, n_items=n_items, blind=blind)


def test_rising_accuracy_is_kept_with_its_statistic():
    result = assess(report({("small", 1): [0, 0, 1, 0, 0, 1, 0, 0, 0, 0],
                            ("medium", 2): [1, 0, 1, 1, 0, 1, 0, 1, 0, 1],
                            ("large", 3): [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]}))
    assert result.outcome is Outcome.rising and result.decision.accepted
    assert result.verdict.statistic == pytest.approx(1.0)
    low, high = result.verdict.interval
    assert 0 < low <= high <= 1
    assert result.verdict.accuracies == {"small": 0.2, "medium": 0.6, "large": 0.9}
    assert result.decision.stage == "capability" and "rising" in result.decision.reasons[0]


def test_expertise_reversal_is_discarded():
    result = assess(report({("small", 1): [1, 1, 1, 1, 1, 1],
                            ("medium", 2): [1, 0, 1, 0, 1, 0],
                            ("large", 3): [0, 0, 0, 0, 0, 1]}))
    assert result.outcome is Outcome.reversal and not result.decision.accepted
    assert result.verdict.reversal and result.verdict.statistic == pytest.approx(-1.0)
    assert result.verdict.interval[1] < 0
    assert "weaker students beat stronger ones" in result.verdict.reason


def test_all_students_poor_is_kept():
    result = assess(report({("small", 1): [1, 0, 0, 0, 0, 0], ("large", 2): [0, 0, 1, 0, 1, 0]}))
    assert result.outcome is Outcome.all_poor and result.decision.accepted
    assert result.verdict.statistic is None


def test_equal_accuracy_is_flat():
    result = assess(report({("small", 1): [1, 1, 1, 1], ("large", 2): [1, 1, 1, 1]}))
    assert result.outcome is Outcome.flat and result.decision.accepted
    assert "no capability signal" in result.verdict.reason


def test_a_small_noisy_difference_is_inconclusive_not_a_reversal():
    result = assess(report({("small", 1): [1, 1, 1, 0, 1], ("large", 2): [1, 1, 0, 1, 0]}))
    assert result.verdict.statistic < 0  # the point estimate says "reversal" ...
    assert result.outcome is Outcome.inconclusive and result.decision.accepted  # ... the interval does not
    low, high = result.verdict.interval
    assert low < 0 < high or high == 0


def test_kept_outcomes_are_configurable():
    noisy = report({("small", 1): [1, 1, 1, 0, 1], ("large", 2): [1, 1, 0, 1, 0]})
    strict = CapabilityConfig(keep={Outcome.inconclusive: False})
    assert not assess(noisy, strict).decision.accepted
    assert strict.keep[Outcome.rising] and not strict.keep[Outcome.reversal]


def test_blind_flag_rejects_unless_configured():
    check = BlindCheck(accuracy_with_series=1.0, accuracy_blind=1.0, chance=0.25, n_with_series=8, n_blind=8,
                       p_value=1e-5, flagged=True, reason="answered as well without the series")
    flagged = report({("small", 1): [0, 1, 0, 1], ("large", 2): [1, 1, 1, 1]}, blind=check)
    result = assess(flagged)
    assert result.verdict.blind_flag and not result.decision.accepted
    assert any(r.startswith("blind:") for r in result.decision.reasons)
    assert assess(flagged, CapabilityConfig(reject_blind=False)).decision.accepted


def test_one_capability_level_gives_no_statistic():
    result = assess(report({("a", 1): [1, 0, 1, 1], ("b", 1): [0, 0, 1, 1]}))
    assert result.outcome is Outcome.inconclusive and result.verdict.statistic is None


def test_bootstrap_is_seeded():
    data = report({("small", 1): [1, 0, 1, 0, 1, 1, 0], ("mid", 2): [1, 1, 0, 1, 1, 0, 1],
                   ("large", 3): [1, 1, 1, 1, 0, 1, 1]})
    assert assess(data).verdict.interval == assess(data).verdict.interval
    assert [r.template_id for r in assess_all([data, data])] == ["t", "t"]


def test_rank_correlation_matches_scipy_and_handles_ties():
    rng = np.random.default_rng(0)
    ranks = np.array([1, 2, 2, 3, 4])
    rows = rng.integers(0, 5, size=(50, 5)) / 4
    expected = [spearmanr(ranks, row).statistic if np.ptp(row) else 0.0 for row in rows]
    np.testing.assert_allclose(rank_correlation(ranks, rows), expected)


def test_scripted_reversal_end_to_end():
    """Weak students that always find the key, a strong one that never does: discarded."""
    items = [Item(question=f"Q{i}?", options=["up", "down", "flat", "noise"], answer_index=i % 4,
                  series=[{"name": "v", "values": [1.0, 2.0]}]) for i in range(8)]
    keys = ["Answer: " + "ABCD"[i % 4] for i in range(8)]
    wrong = ["Answer: " + "ABCD"[(i + 1) % 4] for i in range(8)]
    pool = [Student(StudentConfig(name="tiny", rank=1), FakeListChatModel(responses=keys)),
            Student(StudentConfig(name="small", rank=2), FakeListChatModel(responses=keys)),
            Student(StudentConfig(name="large", rank=3), FakeListChatModel(responses=wrong))]
    students = answer_template(TemplateSample(template_id="bad", items=items), pool,
                               PoolConfig(blind=False, max_concurrency=1))
    result = assess(students)
    assert result.outcome is Outcome.reversal and not result.decision.accepted
    assert result.verdict.accuracies == {"tiny": 1.0, "small": 1.0, "large": 0.0}


def test_a_pool_at_chance_is_all_poor_even_when_one_student_is_lucky():
    # the quick start's case: 20 items, one student 9 right by luck (p = 0.04 alone, 0.12 over three)
    lucky = [1] * 9 + [0] * 11
    result = assess(report({("small", 1): lucky, ("medium", 2): [1] * 3 + [0] * 17, ("large", 3): [1] * 4 + [0] * 16}))
    assert result.outcome is Outcome.all_poor and result.decision.accepted


def test_a_pool_at_chance_rarely_discards_a_template_and_a_rising_pool_is_still_seen():
    rng = np.random.default_rng(0)

    def outcomes(p: tuple[float, float, float], runs: int = 600) -> list[Outcome]:
        return [assess(report({(f"s{r}", r + 1): (rng.random(20) < p[r]).astype(int).tolist() for r in range(3)}),
                       CapabilityConfig(bootstrap=300)).outcome for _ in range(runs)]

    null = outcomes((0.25, 0.25, 0.25))
    assert null.count(Outcome.reversal) / len(null) < 0.02  # 3.1% without the correction over the pool
    rising = outcomes((0.25, 0.45, 0.65))
    assert rising.count(Outcome.rising) / len(rising) > 0.8


def test_ladder_auc_is_the_share_of_rank_pairs_in_order_ties_half():
    rising = report({("small", 1): [0, 0, 1, 0], ("medium", 2): [1, 0, 1, 0], ("large", 3): [1, 1, 1, 0]})
    reversed_ = report({("small", 1): [1, 1, 1, 0], ("large", 2): [0, 0, 1, 0]})
    tied = report({("small", 1): [1, 0, 0, 0], ("medium", 2): [0, 1, 0, 0], ("large", 2): [0, 0, 0, 1]})
    assert ladder_auc([rising]) == (1.0, 3)
    assert ladder_auc([reversed_]) == (0.0, 1)
    assert ladder_auc([tied]) == (0.5, 2)  # equal ranks are no pair; equal accuracies count half
    assert ladder_auc([rising, reversed_, tied]) == (pytest.approx((3 + 0 + 1) / 6), 6)
    assert ladder_auc([report({("only", 1): [1, 0]})]) == (None, 0)


def test_a_ladder_that_guesses_has_a_ladder_auc_near_one_half():
    rng = np.random.default_rng(3)
    guessing = [report({(f"s{rank}", rank): list((rng.random(20) < 0.25).astype(int)) for rank in (1, 2, 3)},
                       template_id=str(t)) for t in range(200)]
    auc, pairs = ladder_auc(guessing)
    assert pairs == 600 and auc == pytest.approx(0.5, abs=0.05)
