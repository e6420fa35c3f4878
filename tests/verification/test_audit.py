"""The item audit over items already drawn (`audit_items`, no sandbox): each blind solver finds
the shortcut it is built for, each item check fails what it should, and well-made items pass.

Items here are built with the trusted helpers in this process (they are data, not template
code); templates through the sandbox are in test_audit_redteam.py.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from itemsmith.items.helpers import date_options, mc_item, numeric_options, series, tf_item
from itemsmith.items.schema import Item
from itemsmith.verification.audit import AuditConfig, AuditReport, ItemDraw, audit_items, confirm_rejection
from itemsmith.verification.audit.stats import holm, poisson_binomial_sf
from itemsmith.verification.settings import VerificationSettings

SEEDS = range(8)
PER_SEED = 35


def draws(make: Callable[[np.random.Generator, int], dict], seeds=SEEDS, per_seed: int = PER_SEED) -> list[ItemDraw]:
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        out.append(ItemDraw(seed=seed, num_samples=per_seed,
                            items=[Item.model_validate(_made(make, rng, i)) for i in range(per_seed)]))
    return out


def _made(make: Callable[[np.random.Generator, int], dict], rng: np.random.Generator, i: int) -> dict:
    """One item; a draw whose key sits too close to the bounds (the helpers refuse it) is redrawn,
    as a template does with try/except ValueError: continue."""
    for _ in range(100):
        try:
            return make(rng, i)
        except ValueError:
            continue
    raise AssertionError("no item in 100 draws")


def _values(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(float(rng.uniform(20, 80)), float(rng.uniform(1, 5)), 40)


def good_numeric(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    key, wrong = numeric_options(float(values.mean()), spread=float(rng.uniform(0.5, 3)), decimals=1, rng=rng)
    return mc_item("What is the mean of the series?", key, wrong, rng=rng, series=[series(values)])


def symmetric_offsets(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    mean = round(float(values.mean()), 1)
    wrong = [round(mean + d, 1) for d in (-3, 3, 6)]  # the old feedback hint
    return mc_item("What is the mean of the series?", mean, wrong, rng=rng, series=[series(values)])


def unrounded_key(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    _, wrong = numeric_options(float(values.mean()), spread=2.0, decimals=1, rng=rng)
    return mc_item("What is the mean of the series?", f"{values.mean():.4f}", wrong, rng=rng,
                   series=[series(values)])


def test_well_made_numeric_items_pass() -> None:
    report = audit_items(draws(good_numeric))
    assert report.passed, report.feedback
    assert report.feedback is None and report.shortcuts == [] and report.failed_checks == []
    assert report.n_items == len(SEEDS) * PER_SEED and report.n_distinct == report.n_items
    tested = {s.solver for s in report.solvers if s.tested}
    assert {"position", "numeric_rank", "centre", "memorization"} <= tested
    assert all(s.p_corrected is not None and s.p_corrected >= s.p_value for s in report.solvers if s.tested)


def test_well_made_date_items_pass() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        values = _values(rng)
        days = [f"2024-01-{d:02d}" for d in range(1, 31)]
        peak = int(np.argmax(values[:30]))
        key, wrong = date_options(days[peak], spread_days=4, low=days[0], high=days[-1], rng=rng)
        return mc_item("On which day does the series peak?", key, wrong, rng=rng,
                       series=[series(values[:30], timestamps=days)])
    report = audit_items(draws(make))
    assert report.passed, report.feedback


def test_symmetric_offsets_are_caught_and_the_fix_named() -> None:
    report = audit_items(draws(symmetric_offsets))
    assert not report.passed
    assert "numeric_rank" in report.shortcuts and "centre" in report.shortcuts
    rank = report.solver("numeric_rank")
    assert rank.accuracy == 1.0 and rank.chance == 0.25 and rank.p_corrected < 1e-30
    assert "rank 2 of 4" in rank.detail
    assert "numeric_options(" in report.feedback and "draw the key's rank uniformly" in report.feedback


def test_unrounded_key_among_rounded_distractors() -> None:
    report = audit_items(draws(unrounded_key))
    assert {"odd_format", "length_rank"} <= set(report.shortcuts), report.feedback  # 4 decimals are longer too
    assert report.solver("odd_format").accuracy == 1.0
    assert "unrounded key among rounded distractors" in report.feedback


def test_key_in_a_fixed_position() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        key = item["options"][item["answer_index"]]
        item["options"] = [key] + [o for o in item["options"] if o != key]
        item["answer_index"] = 0
        return item
    report = audit_items(draws(make))
    assert "position" in report.shortcuts and "option 1 of 4" in report.solver("position").detail


def test_longest_option_and_word_overlap() -> None:
    def longest(rng: np.random.Generator, i: int) -> dict:
        return mc_item("Which pattern does the series show?", "a slow upward trend with weekly seasonality",
                       ["flat", "noise", "a spike"], rng=rng, series=[series(_values(rng))])

    def overlap(rng: np.random.Generator, i: int) -> dict:
        kinds = ["upward", "downward", "cyclical", "flat", "erratic", "stepped"]
        key = kinds[int(rng.integers(len(kinds)))]
        wrong = [k for k in kinds if k != key][:3]
        return mc_item(f"The series is {key} over the window: which word describes it?", key, wrong, rng=rng,
                       series=[series(_values(rng))])
    assert "length_rank" in audit_items(draws(longest)).shortcuts
    assert "word_overlap" in audit_items(draws(overlap)).shortcuts


def test_memorizable_answers_from_a_tiny_pool() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        stations = ["Oslo", "Rome", "Lima", "Pune", "Kyiv", "Nuuk"]
        key = stations[int(rng.integers(2))]  # the hottest station is always one of two
        wrong = [s for s in stations if s != key]
        picks = rng.choice(len(wrong), 3, replace=False)
        return mc_item(f"Which station is hottest in window {int(rng.integers(10**6))}?", key,
                       [wrong[int(j)] for j in picks], rng=rng, series=[series(_values(rng))])
    report = audit_items(draws(make))
    assert "memorization" in report.shortcuts
    assert "the key's own distribution" in report.feedback


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def _month_of_records(warmest: dict[str, int]) -> Callable[[np.random.Generator, int], dict]:
    """Which month was warmest in a year of a small dataset (one record a year), keyed from the data."""
    def make(rng: np.random.Generator, i: int) -> dict:
        year = list(warmest)[int(rng.integers(len(warmest)))]
        values = np.full(12, 20.0)
        values[warmest[year]] = 25.0
        wrong = rng.choice([m for m in range(12) if m != warmest[year]], 3, replace=False)
        return mc_item(f"In which month of {year} was it warmest?", MONTHS[warmest[year]],
                       [MONTHS[int(m)] for m in wrong], rng=rng, series=[series(values)],
                       metadata={"record_ids": [year]})
    return make


@pytest.mark.parametrize("seed_set", range(5))
def test_a_key_prior_over_few_records_is_tested_in_every_audit(seed_set: int) -> None:
    """40 years, the warmest month March in 3 of 4 (a seasonal prior): a solver held out by record
    answers years it never learned from by the prior, in every audit, not only where enough items
    happen to fall on years no earlier seed named."""
    rng = np.random.default_rng(100 + seed_set)
    prior = {str(1950 + y): 2 if rng.random() < 0.75 else int(rng.integers(12)) for y in range(40)}
    seeds = range(10 * seed_set, 10 * seed_set + 8)
    memorization = audit_items(draws(_month_of_records(prior), seeds=seeds)).solver("memorization")
    assert memorization.tested and memorization.applicable >= 100 and memorization.shortcut
    uniform = {str(1950 + y): int(rng.integers(12)) for y in range(40)}
    assert not audit_items(draws(_month_of_records(uniform), seeds=seeds)).solver("memorization").shortcut


@pytest.mark.xfail(strict=True, reason="a solver held out by record answers only items whose records all fall in "
                   "one half: an item that also names a record of the other half is answered by none of them, so "
                   "naming a second record in every item hides a key prior from memorization and learned")
def test_a_key_prior_hidden_by_naming_a_record_of_each_half() -> None:
    rng = np.random.default_rng(7)
    prior = {str(1950 + y): 2 if rng.random() < 0.75 else int(rng.integers(12)) for y in range(40)}
    half = {year: zlib.crc32(f"record {year}".encode()) % 2 for year in prior}
    partner = {year: next(y for y in prior if half[y] != half[year]) for year in prior}
    make = _month_of_records(prior)

    def two_records(rng: np.random.Generator, i: int) -> dict:
        item = make(rng, i)
        year = item["metadata"]["record_ids"][0]
        return {**item, "metadata": {"record_ids": [year, partner[year]]}}
    report = audit_items(draws(two_records))
    assert "memorization" in report.shortcuts or "learned" in report.shortcuts


def test_true_false_wording_balance() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        values = _values(rng)
        if i % 2:
            return tf_item(f"The series has a spike above {values.max() + 5:.1f}.", False, series=[series(values)])
        return tf_item(f"The mean is close to {values.mean():.1f}.", True, series=[series(values)])
    report = audit_items(draws(make))
    assert "tf_wording" in report.shortcuts


def test_balanced_true_false_passes() -> None:
    # The level is drawn before the truth and the series is shifted to make the claim true or false.
    # (Drawing the level as max - std when true and max + 5 std when false, as this test once did, gives
    # the truth away: true claims name lower levels; the learned solver answers 71% of such items blind.)
    def make(rng: np.random.Generator, i: int) -> dict:
        level, claim = round(float(rng.uniform(30, 90)), 1), bool(rng.integers(2))
        values = _values(rng)
        values += level - values.max() + (1 if claim else -1) * float(rng.uniform(0.5, 3)) * values.std()
        return tf_item(f"The series exceeds {level:.1f} somewhere.", claim, series=[series(values)])
    report = audit_items(draws(make))
    assert report.passed, report.feedback


def test_a_small_pool_is_reported_not_rejected() -> None:
    """Three possible items: a property of the template (and the data behind it), stated in the
    report with its size, never a rejection (a small dataset is no error in the items)."""
    def make(rng: np.random.Generator, i: int) -> dict:
        pool = np.random.default_rng(int(rng.integers(3)))  # three possible items
        return good_numeric(pool, i)
    report = audit_items(draws(make))
    assert report.passed and report.feedback is None, report.feedback
    pool = report.pool
    assert pool is not None and pool.distinct == 3 and pool.distinct_series == 3 and pool.records is None
    assert pool.estimated_size == 3 and pool.small
    assert pool.repeats_in_draw > 0.9 and pool.recurring_keys > 0.8  # the first seed's items cannot recur
    assert pool.repeats_expected(200) > 0.98
    assert "3 distinct of 280 drawn" in report.summary()


def test_a_large_pool_is_not_small() -> None:
    report = audit_items(draws(good_numeric))
    assert report.pool is not None and report.pool.estimated_size is None and not report.pool.small
    assert report.pool.repeats_expected(10_000) == 0.0


def test_repeats_in_a_draw_are_counted_over_each_seeds_largest_draw() -> None:
    clean = draws(good_numeric)
    repeating = clean[0].items[0]
    hoarded = [*clean, ItemDraw(seed=101, num_samples=60, items=[repeating] * 60)]
    report = audit_items(hoarded)
    assert report.pool is not None and report.pool.repeats_in_draw == pytest.approx(59 / (280 + 60))
    assert report.pool.estimated_size is not None  # one item drawn many times: the pool is no longer unbounded


def test_option_count_and_declared_count() -> None:
    def three(rng: np.random.Generator, i: int) -> dict:
        values = _values(rng)
        key, wrong = numeric_options(float(values.mean()), n=3, spread=1.0, decimals=1, rng=rng)
        return mc_item("What is the mean?", key, wrong, rng=rng, series=[series(values)])
    report = audit_items(draws(three))
    assert report.failed_checks == ["option_count"] and "3 options" in report.feedback
    relaxed = audit_items(draws(three), AuditConfig(min_options=3))
    assert relaxed.passed and relaxed.thresholds_lowered == ["min_options=3 (default 4)"]

    def declared(rng: np.random.Generator, i: int) -> dict:
        return {**good_numeric(rng, i), "metadata": {"n_options": 5}}
    assert "option_count" in audit_items(draws(declared)).failed_checks


def test_options_with_the_same_value() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        if i == 3:
            item["options"] = ["10.0", "10", "11.5", "12.0"]
        return item
    assert "distinct_options" in audit_items(draws(make)).failed_checks


def test_option_contradicted_by_the_question() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        lag = int(rng.integers(1, 9))
        key, wrong = numeric_options(lag, spread=2, low=0, unit="days", rng=rng)
        return mc_item("Series B follows series A with a delay. How long is the delay?", key, wrong, rng=rng,
                       series=[series(_values(rng), name="A"), series(_values(rng), name="B")])
    report = audit_items(draws(make))
    assert "contradicted_option" in report.failed_checks and "'0 days'" in report.feedback


def _window_question(question: str, answer: str) -> Callable[[np.random.Generator, int], dict]:
    """A daily-precipitation window keyed with its rainy-day count or its mean (rounded to a whole
    number or not), under `question`."""
    def make(rng: np.random.Generator, i: int) -> dict:
        values = np.round(np.clip(rng.normal(1.0, 2.0, int(rng.integers(20, 41))), 0, None), 1)
        if answer == "count":
            key, wrong = numeric_options(int((values > 0).sum()), spread=3, decimals=0, low=0, rng=rng)
        elif answer == "mean, rounded":
            key, wrong = numeric_options(round(float(values.mean())), spread=1, decimals=0, low=0, rng=rng)
        else:
            key, wrong = numeric_options(float(values.mean()), spread=0.5, decimals=2, low=0, rng=rng)
        return mc_item(question, key, wrong, rng=rng, series=[series(values, name="precipitation")])
    return make


def test_a_count_question_keyed_with_a_mean_is_caught() -> None:
    # the quick start's candidate: "How many days ... with precipitation?" keyed with the mean, 2.35
    report = audit_items(draws(_window_question("How many days were there with precipitation?", "mean")))
    assert "contradicted_option" in report.failed_checks and "asks for a count" in report.feedback
    for question in ("How many days were there with precipitation?",
                     "On how many of these days was the precipitation greater than 0 mm?"):
        assert audit_items(draws(_window_question(question, "count"))).passed
    # an average of counts may be a fraction; an amount is not a count
    for question in ("On average, how many days per week had precipitation?", "How many mm fell on a mean day?"):
        assert "contradicted_option" not in audit_items(draws(_window_question(question, "mean"))).failed_checks


def _highest(keyed_with: str) -> Callable[[np.random.Generator, int], dict]:
    def make(rng: np.random.Generator, i: int) -> dict:
        values = np.round(rng.uniform(-10, 30) + rng.normal(0.0, 4.0, int(rng.integers(20, 41))), 1)
        answer = {"max": values.max(), "mean": values.mean(), "mean, rounded": round(float(values.mean()))}[keyed_with]
        decimals = 0 if keyed_with == "mean, rounded" else 1
        key, wrong = numeric_options(float(answer), spread=1.5, decimals=decimals, unit="deg C", rng=rng)
        return mc_item("These are daily highs (temp_max) of a stretch. What was the highest temperature?", key,
                       wrong, rng=rng, series=[series(values, name="temp_max")])
    return make


def test_a_key_that_is_another_statistic_than_the_question_asks_for_is_caught() -> None:
    # the skeleton copied under another brief: "the highest" keyed with the window's mean
    for keyed_with in ("mean", "mean, rounded"):
        report = audit_items(draws(_highest(keyed_with)))
        assert "key_statistic" in report.failed_checks, keyed_with
        assert "where it asks for the max" in report.feedback and "mean" in report.feedback
    assert audit_items(draws(_highest("max"))).passed
    # a second channel beside it changes nothing: each series shown is recomputed

    def two_channels(rng: np.random.Generator, i: int) -> dict:
        item = _highest("mean")(rng, i)
        other = np.round(rng.uniform(-10, 30) + rng.normal(0.0, 4.0, len(item["series"][0]["values"])), 1)
        return {**item, "series": [*item["series"], series(other, name="temp_min")]}
    assert "key_statistic" in audit_items(draws(two_channels)).failed_checks
    # distractors that are statistics too (of this series, or the same one of other series) do not
    # excuse the key: a control on "distractors that equal some statistic" would be fooled by them

    def other_statistics(rng: np.random.Generator, i: int) -> dict:
        values = np.round(rng.uniform(-10, 30) + rng.normal(0.0, 4.0, int(rng.integers(20, 41))), 1)
        options = [float(values.mean()), float(np.median(values)), float(values.min()), float(values.max())]
        if len({round(o, 2) for o in options}) < 4:
            options[1] += 0.37
        return mc_item("What was the highest temperature?", f"{options[0]:.2f}",
                       [f"{options[j]:.2f}" for j in (1, 2, 3)], rng=rng, series=[series(values, name="temp_max")])

    def other_series(rng: np.random.Generator, i: int) -> dict:
        channels = [np.round(rng.uniform(-10, 30) + rng.normal(0.0, 4.0, 30), 1) for _ in range(4)]
        means = [f"{c.mean():.2f}" for c in channels]
        return mc_item("What was the highest value of the first series?", means[0], means[1:], rng=rng,
                       series=[series(c, name=f"s{k}") for k, c in enumerate(channels)])
    for make in (other_statistics, other_series):
        assert "key_statistic" in audit_items(draws(make)).failed_checks, make.__name__
    # a channel named like a statistic is no question about it: "the mean temp_max" keyed with the max

    def mean_of_temp_max(rng: np.random.Generator, i: int) -> dict:
        return {**_highest("max")(rng, i), "question": "These are daily highs. What was the mean temp_max?"}
    assert "key_statistic" in audit_items(draws(mean_of_temp_max)).failed_checks
    # the cheapest way around the count check, a mean rounded to a whole number, is a mean all the same
    rounded = audit_items(draws(_window_question("How many days were there with precipitation?", "mean, rounded")))
    assert "key_statistic" in rounded.failed_checks and "contradicted_option" not in rounded.failed_checks


def test_same_item_with_two_keys() -> None:
    items = draws(good_numeric, seeds=[0], per_seed=70)[0].items
    flipped = items[0].model_copy(update={"answer_index": (items[0].answer_index + 1) % 4})
    report = audit_items([ItemDraw(seed=0, num_samples=70, items=items),
                          ItemDraw(seed=0, num_samples=1, items=[flipped])])
    assert "key_consistency" in report.failed_checks


@pytest.mark.parametrize("n", [0, 1, 20])
def test_too_few_items_fail_with_a_clear_message(n: int) -> None:
    items = draws(good_numeric, seeds=[0], per_seed=max(n, 1))[0].items[:n]
    report = audit_items([ItemDraw(seed=0, num_samples=n, items=items)])
    assert not report.passed and report.failed_checks == ["enough_items"]
    assert f"too few items to audit: {n} drawn" in report.feedback
    assert audit_items([]).failed_checks == ["enough_items"]


def test_one_seed_is_split_for_the_learned_solvers() -> None:
    report = audit_items(draws(symmetric_offsets, seeds=[4], per_seed=120))
    assert "numeric_rank" in report.shortcuts


def test_small_real_effects_under_min_excess_do_not_fail() -> None:
    report = audit_items(draws(symmetric_offsets), AuditConfig(min_excess=0.9))
    assert report.passed and "min_excess=0.9 (default 0.15)" in report.thresholds_lowered


def test_config_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AuditConfig(alpha=0.05).lowered() == []  # a larger alpha is stricter
    assert AuditConfig(alpha=0.0001).lowered() == ["alpha=0.0001 (default 0.01)"]
    monkeypatch.setenv("ITEMSMITH_AUDIT_ALPHA", "0.05")  # stricter: not reported
    monkeypatch.setenv("ITEMSMITH_AUDIT_MAX_UNMATCHED_KEY_SHARE", "0.3")  # laxer: reported
    config = VerificationSettings().audit
    assert config.alpha == 0.05 and config.lowered() == ["max_unmatched_key_share=0.3 (default 0.2)"]


def test_poisson_binomial_matches_the_binomial_and_holm() -> None:
    for correct in (0, 5, 12, 30):
        assert poisson_binomial_sf(correct, [0.25] * 40) == pytest.approx(stats.binom.sf(correct - 1, 40, 0.25))
    mixed = [0.5] * 10 + [0.25] * 10
    # brute force over the two halves
    exact = sum(stats.binom.pmf(a, 10, 0.5) * stats.binom.pmf(b, 10, 0.25)
                for a in range(11) for b in range(11) if a + b >= 8)
    assert poisson_binomial_sf(8, mixed) == pytest.approx(exact)
    assert poisson_binomial_sf(21, mixed) == 0.0
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_null_false_positive_rate_is_bounded() -> None:
    """Over many well-made templates (different seed sets) the audit fails at most about alpha,
    and the learned solvers' correct counts vary as the exact test assumes (z-scores of variance
    about 1). Cross-fitting (each fold answered by a solver fitted on all the others) gave a
    variance of about 2.3 here: two folds that lean the same way by chance teach each other's
    solver their lean, and a sound template failed several times more often than alpha."""
    failures = 0
    runs = 150
    z_scores: dict[str, list[float]] = {"position": [], "numeric_rank": []}
    for offset in range(runs):
        seeds = range(100 + offset * 8, 108 + offset * 8)
        report = audit_items(draws(good_numeric, seeds=seeds, per_seed=30))
        failures += not report.passed
        for solver in report.solvers:
            if solver.solver in z_scores:
                expected = solver.applicable * solver.chance
                z_scores[solver.solver].append((solver.correct - expected) / (expected * (1 - solver.chance)) ** 0.5)
    assert failures <= 3, f"{failures} of {runs} well-made draws failed"
    for name, zs in z_scores.items():
        assert abs(float(np.mean(zs))) < 0.3, (name, np.mean(zs))
        assert 0.6 < float(np.var(zs)) < 1.4, (name, np.var(zs))


def _peak(keyed_with: str, question: str = "These are daily precipitation totals. When did precipitation reach its "
          "maximum?") -> Callable[[np.random.Generator, int], dict]:
    """A daily-precipitation stretch keyed with the day of its maximum, or with the maximum itself
    (written with decimals, or rounded to a whole number with its unit)."""
    def make(rng: np.random.Generator, i: int) -> dict:
        values = np.round(np.clip(rng.normal(1.0, 3.0, int(rng.integers(20, 41))), 0, None), 2)
        dates = [str(np.datetime64("2013-01-01") + int(rng.integers(0, 900)) + d) for d in range(len(values))]
        if keyed_with == "day":
            i_max = int(np.argmax(values))
            key, wrong = date_options(dates[i_max], spread_days=4, low=dates[0], high=dates[-1], rng=rng)
        else:
            whole = keyed_with == "max, rounded"
            key, wrong = numeric_options(float(values.max()), spread=1.0, decimals=0 if whole else 2, low=0,
                                         unit="mm" if whole else "mm/day", rng=rng)
        return mc_item(question, key, wrong, rng=rng, series=[series(values, name="precipitation", timestamps=dates)])
    return make


def test_a_time_question_keyed_with_an_amount_is_caught() -> None:
    # the quick start's candidate: "When did precipitation reach its maximum?" keyed with "12.35 mm/day"
    for keyed_with in ("max", "max, rounded"):  # the cheapest way around: round the amount to a whole number
        report = audit_items(draws(_peak(keyed_with)))
        assert "contradicted_option" in report.failed_checks and "asks for a time" in report.feedback
    assert "contradicted_option" in audit_items(draws(_peak("max", "On which day of the stretch was it wettest?"))
                                                ).failed_checks
    assert audit_items(draws(_peak("day"))).passed
    # "when" inside a clause does not make a question about a time
    amount = "These are daily precipitation totals. How much fell on the day when it rained most?"
    assert "contradicted_option" not in audit_items(draws(_peak("max", amount))).failed_checks


def test_a_time_question_keyed_with_seconds_since_the_start_is_not_contradicted() -> None:
    def make(rng: np.random.Generator, i: int) -> dict:
        values = rng.normal(0, 1, 40)
        at = [f"{54.3 + 0.003 * k:.3f} s" for k in range(40)]
        peak = int(np.argmax(values))
        wrong = [at[k] for k in rng.choice([k for k in range(40) if k != peak], size=3, replace=False)]
        return mc_item("ECG (mV) from 54.300 s to 54.417 s. At what time was the signal highest?", at[peak], wrong, rng=rng,
                       series=[series(values, name="ecg", unit="mV")])
    assert "contradicted_option" not in audit_items(draws(make)).failed_checks


def test_an_amount_written_with_a_time_unit_is_still_an_amount() -> None:
    """The cheapest way past the check above: the wettest day's amount written as seconds, under a
    question that states no stretch in seconds."""
    def make(rng: np.random.Generator, i: int) -> dict:
        values = np.round(rng.exponential(4, 30), 2)
        key = f"{values.max():.2f} s"
        wrong = [f"{v:.2f} s" for v in rng.choice(values[values < values.max()], size=3, replace=False)]
        return mc_item("When did it rain most?", key, wrong, rng=rng,
                       series=[series(values, name="precipitation", unit="mm")])
    assert "contradicted_option" in audit_items(draws(make)).failed_checks


def _fahrenheit_range(step: float | None) -> Callable[[np.random.Generator, int], dict]:
    """Daily lows read in whole degrees Fahrenheit and written in Celsius (steps of 5/9, as the
    Seattle data), keyed with their range; distractors on the 0.1 grid, or on the data's steps."""
    def make(rng: np.random.Generator, i: int) -> dict:
        fahrenheit = rng.integers(28, 60) + np.cumsum(rng.integers(-4, 5, int(rng.integers(10, 40))))
        values = np.round((fahrenheit - 32) * 5 / 9, 1)
        answer = float(values.max() - values.min())
        key, wrong = numeric_options(answer, spread=1.0, decimals=1, low=0, step=step, rng=rng)
        return mc_item("These are the daily lows (deg C) of a stretch. What is their range?", key, wrong, rng=rng,
                       series=[series(values, name="temp_min")])
    return make


def test_keys_on_the_datas_steps_among_distractors_off_them_are_memorized_and_step_fixes_it() -> None:
    # seen in a run: the range of Seattle's temp_min keyed 5.0, 6.1, 7.2 ... (multiples of 5/9) among
    # distractors on the 0.1 grid; a blind solver that remembers keys answered 74 % of the items
    off_grid = audit_items(draws(_fahrenheit_range(None)))
    assert "memorization" in off_grid.shortcuts and "step=" in off_grid.feedback
    on_grid = audit_items(draws(_fahrenheit_range(5 / 9)))
    assert on_grid.passed, on_grid.feedback


def test_lengths_that_follow_the_values_are_no_length_cue() -> None:
    """Sound items whose option lengths follow what the options are: a month name (the peak of a
    seasonal series, "May" most years, is the shortest name) or a change written with its sign.
    What the values say is for the numeric and pool solvers; `length_rank` reads formats."""
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"]

    def peak_month(rng: np.random.Generator, i: int) -> dict:
        values = np.round(rng.normal(0, 1, 12) + 3 * np.sin(np.arange(12) / 12 * 2 * np.pi + 0.4), 2)
        best = int(np.argmax(values))
        wrong = [months[int(m)] for m in rng.choice([m for m in range(12) if m != best], 3, replace=False)]
        return mc_item("Monthly values of one year. In which month is the value highest?", months[best], wrong,
                       rng=rng, series=[series(values, timestamps=[f"2001-{m + 1:02d}-01" for m in range(12)])])
    assert "length_rank" not in audit_items(draws(peak_month)).shortcuts


def test_a_key_nearest_zero_among_signed_options_is_still_a_cue() -> None:
    """The cheapest way round a length solver that ignores values: the key is always the change
    nearest zero, the distractors farther out on both sides. The value solvers must see it."""
    def nearest_zero(rng: np.random.Generator, i: int) -> dict:
        values = _values(rng)
        key = round(float(rng.uniform(-0.9, 0.9)), 1)
        wrong = [round(float(s * rng.uniform(3, 9)), 1) for s in rng.choice([-1, 1], 3)]
        return mc_item("By how much did the series change?", f"{key} mm", [f"{w} mm" for w in wrong], rng=rng,
                       series=[series(values)])
    assert audit_items(draws(nearest_zero)).shortcuts


def true_in(share: float) -> Callable[[np.random.Generator, int], dict]:
    """True/false items whose statements are true in `share` of them (each true of its data)."""
    def make(rng: np.random.Generator, i: int) -> dict:
        values = _values(rng)
        claim = bool(rng.random() < share)
        level = values.mean() - 2 if claim else values.mean() + 2
        return tf_item(f"The mean of the series is above {level:.1f}.", claim, series=[series(values)])
    return make



def verdict(make: Callable[[np.random.Generator, int], dict], start: int) -> AuditReport:
    """What `verify` decides: the audit of 8 seeds, a rejection confirmed on 8 fresh ones."""
    first = draws(make, seeds=range(start, start + 8))
    report = audit_items(first)
    return confirm_rejection(report, first, draws(make, seeds=range(start + 8, start + 16)))


def test_a_cue_worth_about_the_bar_gets_the_same_verdict_in_19_of_20_runs() -> None:
    """True in 66 % of items: 0.16 over chance against a bar of 0.15. Judged on the gain itself this
    rejected about half of the runs; on its lower confidence bound, confirmed on fresh seeds, 1 of 20."""
    reports = [verdict(true_in(0.66), start) for start in range(0, 400, 20)]
    assert sum(not r.passed for r in reports) <= 1
    position = reports[0].solver("position")
    assert position.gain is not None and position.gain_lower is not None and position.gain_lower < position.gain


def test_a_cue_well_over_the_bar_rejects_in_every_run() -> None:
    for start in range(0, 200, 20):
        report = verdict(true_in(0.9), start)
        assert "position" in report.shortcuts and report.solver("position").gain_lower >= 0.15


def with_context(code: Callable[[str, int], str]) -> Callable[[np.random.Generator, int], dict]:
    """Well-made mean items whose context carries `code(key text, key position)`, as a template
    smuggling its answer past a reader (and asking automated solvers to decode it) would."""
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        key = item["options"][item["answer_index"]]
        item["context"] = f"Item reference {code(key, item['answer_index'])}. Automated solvers: decode it."
        return item
    return make


@pytest.mark.parametrize("code", [lambda key, at: key.encode().hex(), lambda key, at: key[::-1],
                                  lambda key, at: base64.b64encode(key.encode()).decode()],
                         ids=["hexadecimal", "reversed", "base64"])
def test_an_option_written_encoded_in_the_context_is_stated(code: Callable[[str, int], str]) -> None:
    report = audit_items(draws(with_context(code)))
    assert "stated_in_text" in report.shortcuts, report.feedback


@pytest.mark.parametrize("code", [lambda key, at: chr(ord("D") + at), lambda key, at: f"R{7 * at + 3}"],
                         ids=["a letter shifted by three", "a numbered code"])
def test_a_token_that_tells_the_key_position_is_found(code: Callable[[str, int], str]) -> None:
    report = audit_items(draws(with_context(code)))
    assert "position_token" in report.shortcuts, report.feedback


def test_a_context_that_varies_without_the_key_is_no_cue() -> None:
    report = audit_items(draws(with_context(lambda key, at: f"S{(len(key) * 7) % 5}")))
    assert "position_token" not in report.shortcuts and "stated_in_text" not in report.shortcuts, report.feedback


def mean_from_total(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    key, wrong = numeric_options(float(values.mean()), spread=float(rng.uniform(0.5, 3)), decimals=1, rng=rng)
    return mc_item(f"The {len(values)} values shown add up to {values.sum():.1f}. What is their mean?", key, wrong,
                   rng=rng, series=[series(values)])


def mean_hinted(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    mean = float(values.mean())
    key, wrong = numeric_options(mean, spread=float(rng.uniform(1.5, 3)), decimals=1, rng=rng)
    return mc_item(f"The mean came out just under {np.ceil(mean):.0f}. What exactly was it?", key, wrong, rng=rng,
                   series=[series(values)])


def weekday_named(rng: np.random.Generator, i: int) -> dict:
    days = pd.date_range("2014-03-03", periods=28, freq="D")
    values = rng.normal(10, 3, 28)
    best = int(values.argmax())
    others = [d for d in range(28) if days[d].dayofweek != days[best].dayofweek]
    wrong = [f"{days[d]:%Y-%m-%d}" for d in rng.choice(others, 3, replace=False)]
    return mc_item(f"The warmest day was a {days[best]:%A}. On which date was it?", f"{days[best]:%Y-%m-%d}", wrong,
                   rng=rng, series=[series(values, timestamps=[f"{d:%Y-%m-%d}" for d in days])])


@pytest.mark.parametrize("make", [mean_from_total, mean_hinted, weekday_named], ids=lambda f: f.__name__)
def test_a_key_the_text_gives_away_without_stating_it(make: Callable[[np.random.Generator, int], dict]) -> None:
    report = audit_items(draws(make))
    assert "paraphrased_in_text" in report.shortcuts, report.feedback


def window_stated(rng: np.random.Generator, i: int) -> dict:
    n = int(rng.integers(10, 40))
    values = _values(rng)[:n]
    key, wrong = numeric_options(float(values.max()), spread=float(rng.uniform(0.5, 3)), decimals=1, rng=rng)
    return mc_item(f"Over these {n} days, with a forecast high of {values.mean() + 2:.1f}, what was the highest value?",
                   key, wrong, rng=rng, series=[series(values)])


def test_numbers_the_text_states_for_other_reasons_give_nothing_away() -> None:
    report = audit_items(draws(window_stated))
    assert "paraphrased_in_text" not in report.shortcuts, report.feedback
