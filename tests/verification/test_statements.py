"""True/false statements recomputed from the series shown (`verification/audit/statements.py`) and
the audit check built on them (`statement_truth`): a key tested on another channel than the statement
names fails, the right key passes, and a statement the reader cannot read gives no verdict."""

from __future__ import annotations

import numpy as np
import pytest

from itemsmith.items.helpers import series, tf_item
from itemsmith.items.schema import Item
from itemsmith.verification.audit import ItemDraw, audit_items
from itemsmith.verification.audit.statements import statement_truths

TMIN = [4.4, 2.8, 3.9, 6.1, 5.0, 3.3, 7.2]
TMAX = [9.4, 8.9, 10.6, 12.2, 11.1, 8.3, 13.9]
CONSUMPTION = [0.6, 0.9, 1.1, 0.4, 0.8]
INCOME = [0.5, 0.7, 0.2, 0.9, 0.3]


def statement(text: str, *channels: dict, key: bool = True) -> Item:
    return Item.model_validate(tf_item(f"Daily data shown. True or false: {text}", key, series=list(channels)))


@pytest.mark.parametrize(("text", "truth"), [
    ("on at least one of these days the minimum temperature was below 3.0 °C.", True),
    ("on at least one of these days the minimum temperature was below 2.5 °C.", False),
    ("on every one of these days the minimum temperature was above 2.5 °C.", True),
    ("the mean of the daily minimum was above 5.0 °C.", False),
    ("on no day was the minimum temperature below 2.5 °C.", True),
    ("the minimum temperature was not above 7.5 °C on any day.", True),
])
def test_a_statement_against_a_printed_number_is_recomputed(text: str, truth: bool) -> None:
    assert statement_truths(statement(text, series(TMIN, name="temp_min", unit="°C"))) == {truth}


def test_a_statistic_that_rounds_to_the_printed_number_reads_both_ways() -> None:
    item = statement("the lowest minimum temperature was below 2.8 °C.", series(TMIN, name="temp_min", unit="°C"))
    assert statement_truths(item) == {True, False}


def test_two_series_compared_by_a_statistic_they_name() -> None:
    shown = (series(CONSUMPTION, name="consumption", unit="%"), series(INCOME, name="income", unit="%"))
    larger = "the mean quarterly change of consumption was larger than the mean quarterly change of income."
    smaller = "the mean quarterly change of income was larger than the mean quarterly change of consumption."
    assert statement_truths(statement(larger, *shown)) == {True}
    assert statement_truths(statement(smaller, *shown)) == {False}


@pytest.mark.parametrize("text", [
    "the series is seasonal.",
    "on more than 3 days the minimum temperature was below 5.0 °C.",
    "it is not true that no day was below 3.0 °C.",
    "the temperature dipped sharply midweek.",
])
def test_a_statement_it_cannot_read_gives_no_verdict(text: str) -> None:
    assert statement_truths(statement(text, series(TMIN, name="temp_min", unit="°C"))) is None


def frost_items(rng: np.random.Generator, n: int, *, keyed_on_tmax: bool) -> list[Item]:
    """The statement is about the daily minimum shown; a flawed twin tests it on the daily maximum."""
    items = []
    for _ in range(n):
        tmin = rng.normal(4, 2, 10).round(1)
        tmax = (tmin + rng.uniform(4, 8, 10)).round(1)
        level = round(float(tmin.min()) + float(rng.choice([-1.0, 1.0, 5.0, 7.0])), 1)
        tested = tmax if keyed_on_tmax else tmin
        items.append(Item.model_validate(tf_item(
            f"True or false: on at least one of these days the minimum temperature was below {level:.1f} °C.",
            bool(tested.min() < level), series=[series(tmin, name="temp_min", unit="°C")])))
    return items


@pytest.mark.parametrize("keyed_on_tmax", [False, True], ids=["the channel shown", "another channel"])
def test_the_audit_fails_keys_tested_on_another_channel(keyed_on_tmax: bool) -> None:
    rng = np.random.default_rng(3)
    draws = [ItemDraw(seed=s, num_samples=30, items=frost_items(rng, 30, keyed_on_tmax=keyed_on_tmax)) for s in range(8)]
    finding = next(f for f in audit_items(draws).findings if f.check == "statement_truth")
    assert finding.passed is not keyed_on_tmax, finding.message
