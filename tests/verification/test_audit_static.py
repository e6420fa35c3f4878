"""The static audit (a fixed item set, no regeneration): planted shortcuts are caught per group and
pooled per category, with each test's power; sound item sets (keys drawn at random) pass."""

from __future__ import annotations

import numpy as np
import pytest

from itemsmith.items.schema import Item, ItemKind, Series
from itemsmith.verification.audit import AuditConfig
from itemsmith.verification.audit.static import ALL_SCOPE, StaticGroup, audit_static

OPTIONS = ["upward trend", "downward trend", "no trend", "a cycle"]


def item(rng: np.random.Generator, key: int, *, question: str | None = None, values: list[float] | None = None,
         options: list[str] | None = None) -> Item:
    shown = options or list(rng.permutation(OPTIONS))
    return Item(question=question or f"Which pattern does this series show? (#{int(rng.integers(1e9))})",
                options=shown, answer_index=key,
                series=[Series(values=values or [float(v) for v in rng.normal(0, 1, 24).cumsum()])])


def groups_of(keys_of: list[list[int]], rng: np.random.Generator, category: str = "trend") -> list[StaticGroup]:
    return [StaticGroup(f"g{g}", category, [item(rng, k) for k in keys]) for g, keys in enumerate(keys_of)]


def solver(pooled_or_report, name: str):
    return next(s for s in pooled_or_report.solvers if s.solver == name)


def test_keys_balanced_within_each_group_are_caught_by_the_least_keyed_solver() -> None:
    """The cheapest fake of a random key: a schedule using each position equally often per group."""
    rng = np.random.default_rng(0)
    balanced = [list(rng.permutation([0, 1, 2, 3, 0, 1, 2, 3])) for _ in range(30)]
    report = audit_static(groups_of(balanced, rng))
    least = solver(report.overall, "least_keyed")
    assert least.shortcut and least.accuracy == 1.0  # leave one out: the left-out position is the one short
    assert least.p_value is not None and least.p_value < 1e-3  # at the simulation's floor, 1 / 4001
    assert solver(report.categories[0], "least_keyed").shortcut
    # one group of 8 cannot tell: a random 2-2-2-2 split (p = 2520 / 4**8 = 0.038) scores 8 of 8 too
    group = solver(report.groups[0].report, "least_keyed")
    assert group.correct == 8 and not group.shortcut and group.p_value == pytest.approx(0.038, abs=0.01)
    assert group.detectable_accuracy is None and group.power == 0.0
    assert not solver(report.overall, "position").shortcut


def test_random_keys_pass_as_a_control() -> None:
    rng = np.random.default_rng(1)
    random_keys = [[int(k) for k in rng.integers(0, 4, 8)] for _ in range(30)]
    report = audit_static(groups_of(random_keys, rng))
    assert not report.overall.shortcuts, report.overall.solvers
    assert sum(g.report.passed for g in report.groups) >= 28  # alpha = 0.01 per group, Holm over solvers


def test_a_group_of_8_gets_a_verdict_with_its_power_stated() -> None:
    rng = np.random.default_rng(2)
    report = audit_static(groups_of([[0] * 8], rng))
    audit = report.groups[0].report
    assert audit.n_items == 8 and "enough_items" not in audit.failed_checks
    position = solver(audit, "position")
    assert position.tested and position.applicable == 8  # leave one out: every item is answered
    assert position.correct == 8 and position.shortcut
    assert position.detectable_accuracy is not None and 0.25 < position.detectable_accuracy <= 1
    assert position.power is not None and 0 < position.power < 1
    small = audit_static(groups_of([[0, 1]], rng)).groups[0].report
    assert solver(small, "position").detectable_accuracy is None and solver(small, "position").power == 0.0


def test_exact_duplicates_are_found_in_and_across_groups() -> None:
    rng = np.random.default_rng(3)
    copies = [item(rng, int(k)) for k in rng.integers(0, 4, 6)]
    first = StaticGroup("g0", "anomaly", [*copies, copies[0], copies[1]])
    second = StaticGroup("g1", "anomaly", [copies[2], item(rng, 1)])
    report = audit_static([first, second])
    finding = {f.check: f for f in report.groups[0].report.findings}["duplicate_items"]
    assert not finding.passed and finding.message.startswith("2 of 8 items repeat")
    across = {f.check: f for f in report.groups[1].report.findings}["duplicate_items"]
    assert not across.passed and "g0 (1)" in across.message
    assert report.categories[0].duplicates == 3 and report.overall.failed_checks["duplicate_items"] == 2


def test_near_duplicate_series_are_found_and_distinct_series_pass() -> None:
    rng = np.random.default_rng(4)
    base = [float(v) for v in rng.normal(0, 1, 30).cumsum()]
    scaled = [[2.0 * v + 5.0 + 1e-4 * float(e) for v, e in zip(base, rng.normal(size=30), strict=True)]
              for _ in range(6)]
    same = StaticGroup("same", "c", [item(rng, i % 4, values=v) for i, v in enumerate(scaled)])
    distinct = StaticGroup("distinct", "c", [item(rng, i % 4) for i in range(6)])
    report = audit_static([same, distinct])
    checks = [{f.check: f for f in g.report.findings}["same_series"] for g in report.groups]
    assert not checks[0].passed and checks[0].message.startswith("6 of 6 items")
    assert checks[1].passed


def test_key_written_into_the_question_is_caught() -> None:
    rng = np.random.default_rng(5)
    items = []
    for _ in range(40):
        options = list(rng.permutation(OPTIONS))
        key = int(rng.integers(4))
        items.append(item(rng, key, options=options,
                          question=f"The analyst says the series shows {options[key]}. Which pattern is it?"))
    report = audit_static([StaticGroup("leak", "trend", items)])
    assert solver(report.groups[0].report, "key_in_question").shortcut
    control = audit_static(groups_of([[int(k) for k in rng.integers(0, 4, 40)]], rng))
    assert not solver(control.groups[0].report, "key_in_question").applicable


def test_true_false_groups_and_too_few_options_are_reported() -> None:
    rng = np.random.default_rng(6)
    tf = [Item(question=f"Is there an anomaly? ({i})", options=["Yes", "No"], answer_index=int(k), kind=ItemKind.tf,
               series=[Series(values=[float(v) for v in rng.normal(size=12)])])
          for i, k in enumerate(rng.integers(0, 2, 10))]
    three = [item(rng, int(k), options=OPTIONS[:3]) for k in rng.integers(0, 3, 6)]
    report = audit_static([StaticGroup("tf", "a", tf), StaticGroup("three", "a", three)])
    assert {f.check: f for f in report.groups[0].report.findings}["option_count"].passed
    assert not {f.check: f for f in report.groups[1].report.findings}["option_count"].passed


@pytest.mark.parametrize("correlation", [1.5, 0.0])
def test_config_bounds(correlation: float) -> None:
    with pytest.raises(ValueError):
        AuditConfig(near_duplicate_correlation=correlation)


def test_scopes_are_named() -> None:
    rng = np.random.default_rng(7)
    report = audit_static(groups_of([[0, 1, 2, 3]], rng, "x") + groups_of([[1, 2, 3, 0]], rng, "y"))
    assert [c.scope for c in report.categories] == ["x", "y"] and report.overall.scope == ALL_SCOPE
    assert report.overall.groups == 2 and report.overall.items == 8


@pytest.mark.parametrize("pick", ["most", "least"])
def test_position_priors_answer_as_a_plain_leave_one_out_with_the_solvers_tie_break(pick: str) -> None:
    """The vectorized prior recomputed item by item with `features.tie_break`."""
    from collections import Counter

    from itemsmith.verification.audit.features import tie_break
    from itemsmith.verification.audit.position_prior import POSITION_PRIORS, answer_prior

    rng = np.random.default_rng(8)
    items = [item(rng, int(k)) for k in rng.integers(0, 4, 25)]
    prior = next(p for p in POSITION_PRIORS if p.pick == pick)
    right = 0
    for i, it in enumerate(items):
        seen = Counter(o.answer_index for j, o in enumerate(items) if j != i)
        counts = [seen[p] for p in range(4)]
        target = min(counts) if pick == "least" else max(counts)
        right += tie_break(it, [p for p in range(4) if counts[p] == target]) == it.answer_index
    outcome = answer_prior(prior, items, "g")
    assert (outcome.applicable, outcome.correct) == (25, right)
    assert abs(outcome.null.mean() - 25 / 4) < 0.3  # each answer right 1 time in 4 under the null


def test_the_one_pass_tail_equals_the_survival_function_at_every_count() -> None:
    from itemsmith.verification.audit.stats import poisson_binomial_sf, poisson_binomial_tail

    chances = list(np.random.default_rng(9).choice([0.5, 1 / 3, 0.25, 0.2], 40))
    tail = poisson_binomial_tail(chances)
    assert len(tail) == 41 and tail[0] == pytest.approx(1.0)
    assert all(tail[k] == pytest.approx(poisson_binomial_sf(k, chances), abs=1e-12) for k in range(41))
