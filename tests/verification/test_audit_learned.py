"""The learned blind solver, the stated-in-text and question-memory solvers, and option_value.

Each flawed template below hides a cue that no named solver reads (the key nearest a round number,
the only odd last digit, distractors that are multiples of the key, a stem of the answer in the
question, a true/false threshold that gives the truth); the audit must fail it. Items are drawn
in-process with the template helpers over 8 seeds of 30 items, as the audit draws them; seeds are
fixed so each test is deterministic. Sound templates (numeric_options keys, 50/50 statements) are
the controls: no solver may flag them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from itemsmith.items.helpers import mc_item, numeric_options, series, tf_item
from itemsmith.items.schema import Item
from itemsmith.verification.audit import AuditReport, ItemDraw, audit_items
from itemsmith.verification.audit.features import option_value
from itemsmith.verification.audit.item_checks import Drawn, _distinct_options
from itemsmith.verification.settings import AuditConfig

Make = Callable[[np.random.Generator], dict[str, Any]]


def audit(make: Make, seed: int = 0, seeds: int = 8, per_seed: int = 30) -> AuditReport:
    draws = []
    for k in range(seeds):
        rng = np.random.default_rng([seed, k])
        draws.append(ItemDraw(seed=k, num_samples=per_seed,
                              items=[Item.model_validate(make(rng)) for _ in range(per_seed)]))
    return audit_items(draws)


def shown(rng: np.random.Generator) -> list[dict[str, Any]]:
    return [series(rng.normal(20, 5, 30).round(1), name="value")]


def mc(rng: np.random.Generator, question: str, key: str, wrong: list[str]) -> dict[str, Any]:
    return mc_item(question, key, wrong, rng=rng, series=shown(rng))


def offsets_at_random_rank(rng: np.random.Generator, key: float, gaps: list[float]) -> list[float]:
    """Three distractors around `key` with the key at a uniformly random rank of four."""
    below = int(rng.integers(4))
    signs = [-1] * below + [1] * (3 - below)
    cumulative: dict[int, float] = {-1: 0.0, 1: 0.0}
    out = []
    for sign, gap in zip(signs, gaps, strict=True):
        cumulative[sign] += gap
        out.append(key + sign * cumulative[sign])
    return out


def round_key(rng: np.random.Generator) -> dict[str, Any]:
    key = 10.0 * int(rng.integers(3, 30))
    gaps = [float(g) for g in rng.choice([3, 4, 6, 7, 13, 14, 16, 17], size=3)]
    wrong = offsets_at_random_rank(rng, key, gaps)
    return mc(rng, "What is the total of the series?", f"{key:.0f}", [f"{w:.0f}" for w in wrong])


def odd_key(rng: np.random.Generator) -> dict[str, Any]:
    key = 2 * int(rng.integers(20, 200)) + 1
    gaps = [float(g) for g in 2 * rng.integers(1, 6, size=3) + 1]  # odd gaps: every distractor even
    wrong = offsets_at_random_rank(rng, key, gaps)
    return mc(rng, "What is the total of the series?", str(key), [f"{w:.0f}" for w in wrong])


def multiple_distractors(rng: np.random.Generator) -> dict[str, Any]:
    key = int(rng.integers(5, 60))
    factors = [0.5, 2.0, 3.0, 4.0, 1 / 3, 0.25]
    chosen = rng.choice(len(factors), size=3, replace=False)
    return mc(rng, "How many values exceed the threshold?", str(key), [f"{key * factors[i]:g}" for i in chosen])


TRENDS = ["increasing", "decreasing", "flat", "oscillating"]
HINTS = {"increasing": "increases", "decreasing": "decreases", "flat": "flattens", "oscillating": "oscillates"}


def stem_in_question(rng: np.random.Generator) -> dict[str, Any]:
    key = TRENDS[int(rng.integers(4))]
    return mc(rng, f"The series {HINTS[key]} in places. Which pattern describes it?", key,
              [t for t in TRENDS if t != key])


def threshold_tf(rng: np.random.Generator) -> dict[str, Any]:
    truth = bool(rng.integers(2))
    threshold = float(rng.uniform(2, 9)) if truth else float(rng.uniform(40, 90))
    return tf_item(f"The largest value exceeds {threshold:.1f}.", truth, series=shown(rng))


def stated_key(rng: np.random.Generator) -> dict[str, Any]:
    key, wrong = numeric_options(float(rng.uniform(10, 30)), rng=rng, spread=2.0, decimals=1)
    return mc(rng, f"The values average {key}. What is their mean?", key, wrong)


def remembered_key(rng: np.random.Generator) -> dict[str, Any]:
    month = int(rng.integers(1, 40))
    fixed = np.random.default_rng(month)  # a key fixed per record that the question names
    key, wrong = numeric_options(float(fixed.uniform(10, 30)), rng=rng, spread=2.0, decimals=1)
    return mc(rng, f"What was the mean temperature of record {month}?", key, wrong)


def sound_numeric(rng: np.random.Generator) -> dict[str, Any]:
    values = rng.normal(float(rng.uniform(5, 30)), 5, 30).round(1)
    key, wrong = numeric_options(float(values.sum()), rng=rng, spread=float(rng.uniform(5, 40)), decimals=1)
    return mc_item("What is the total of the series?", key, wrong, rng=rng, series=[series(values, name="value")])


def sound_tf(rng: np.random.Generator) -> dict[str, Any]:
    # the threshold is drawn first and the truth 50/50, then the series is built to make it so: the
    # threshold says nothing (drawing it around the series' max instead leaks the truth at the edges of
    # the max's range, a cue the learned solver reads: 59% right where chance is 50%)
    threshold, truth = round(float(rng.uniform(10, 50)), 1), bool(rng.integers(2))
    values = rng.normal(0, 3, 30)
    values += threshold + (1 if truth else -1) * float(rng.uniform(0.5, 5)) - values.max()
    return tf_item(f"The largest value exceeds {threshold:.1f}.", truth, series=[series(values.round(2), name="value")])


@pytest.mark.parametrize("make", [round_key, odd_key, stem_in_question, threshold_tf],
                         ids=lambda f: f.__name__)
def test_the_learned_solver_finds_cues_no_named_solver_reads(make: Make) -> None:
    report = audit(make)
    assert "learned" in report.shortcuts, report.feedback
    assert "a model fitted on earlier seeds' items" in (report.feedback or "")


def test_distractors_that_are_multiples_of_the_key_fail() -> None:
    report = audit(multiple_distractors)
    assert not report.passed and report.shortcuts, report.feedback


def test_a_key_stated_in_the_question_fails() -> None:
    report = audit(stated_key)
    assert "stated_in_text" in report.shortcuts, report.feedback


def test_a_key_remembered_from_the_question_across_seeds_fails() -> None:
    report = audit(remembered_key)
    assert "question_memory" in report.shortcuts, report.feedback


@pytest.mark.parametrize("make", [sound_numeric, sound_tf], ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", range(4))
def test_sound_templates_pass(make: Make, seed: int) -> None:
    report = audit(make, seed=seed)
    assert report.passed, report.feedback


def test_descriptions_that_hold_a_number_are_not_read_as_that_number() -> None:
    assert option_value("Time series 1 with flip anomaly") is None
    assert option_value("Time series 1 with speed up/down anomaly") is None
    assert option_value("12.3 mm/day") == 12.3 and option_value("day 17") == 17


def test_options_that_share_a_number_but_not_their_words_are_distinct() -> None:
    rng = np.random.default_rng(0)
    labels = ["Series 1 with trend", "Series 1 with noise", "Series 2 with trend", "Series 2 with noise"]
    item = Item.model_validate(mc_item("Which?", labels[0], labels[1:], rng=rng, series=shown(rng)))
    same = Item.model_validate(mc_item("Which?", "12.0", ["12.00", "13.0", "14.0"], rng=rng, series=shown(rng)))
    draws = [ItemDraw(seed=0, num_samples=1, items=[item])]
    assert _distinct_options(Drawn.of(draws), AuditConfig()).passed
    assert not _distinct_options(Drawn.of([ItemDraw(seed=0, num_samples=1, items=[same])]), AuditConfig()).passed
