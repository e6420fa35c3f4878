"""The key is the statistic its question asks for, of a series shown (`key_is_statistic`, built on
verification.audit.recompute), in both directions: a key that is another statistic fails
(`key_statistic`), and so does a key that is no reading of the asked statistic at all (computed on
a window shifted by a day, on another column, on the whole record, with a bug on half the items).

Items are drawn in-process with the template helpers from one long record (8 seeds of 30 items,
as the audit draws them; fixed seeds: deterministic). Controls: the same templates computing the key
from exactly the values shown pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from itemsmith.items.helpers import date_options, mc_item, numeric_options, series
from itemsmith.items.schema import Item
from itemsmith.verification.audit import AuditReport, ItemDraw, audit_items
from itemsmith.verification.audit.recompute import recompute

RECORD = np.random.default_rng(7)
TEMP_MAX = np.round(RECORD.normal(14, 5, 2000), 1)
TEMP_MIN = np.round(TEMP_MAX - np.abs(RECORD.normal(7, 2, 2000)), 1)
RAIN = np.round(np.maximum(0, RECORD.normal(1, 4, 2000)), 1)
DATES = [str(d) for d in np.arange(np.datetime64("2012-01-01"), np.datetime64("2012-01-01") + 2000)]

# (values shown, values the key is computed on) from a window start and size
Window = Callable[[np.ndarray, int, int], tuple[np.ndarray, np.ndarray]]


def same(column: np.ndarray, start: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    return column[start:start + size], column[start:start + size]


def shifted(column: np.ndarray, start: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    return column[start:start + size], column[start + 1:start + 1 + size]


def whole_record(column: np.ndarray, start: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    return column[start:start + size], column[(start // 31) * 31:(start // 31) * 31 + 31 + size]


def audit(make: Callable[[np.random.Generator], dict[str, Any] | None], seed: int = 0) -> AuditReport:
    draws = []
    for k in range(8):
        rng = np.random.default_rng([seed, k])
        items: list[Item] = []
        while len(items) < 30:
            raw = make(rng)
            if raw is not None:
                items.append(Item.model_validate(raw))
        draws.append(ItemDraw(seed=k, num_samples=30, items=items))
    return audit_items(draws)


def finding(report: AuditReport) -> Any:
    return next(f for f in report.findings if f.check == "key_is_statistic")


def mean_item(window: Window, key_column: np.ndarray = TEMP_MAX) -> Callable[[np.random.Generator], dict[str, Any]]:
    def make(rng: np.random.Generator) -> dict[str, Any]:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values, _ = window(TEMP_MAX, start, size)
        _, keyed = window(key_column, start, size)
        key, wrong = numeric_options(float(keyed.mean()), rng=rng, spread=1.0, decimals=1, unit="°C")
        return mc_item(f"What was the average daily maximum temperature from {DATES[start]} on?", key, wrong, rng=rng,
                       series=[series(values, name="temp_max", timestamps=DATES[start:start + size], unit="°C")])
    return make


def count_item(window: Window) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values, keyed = window(RAIN, start, size)
        try:
            key, wrong = numeric_options(int((keyed > 2).sum()), rng=rng, spread=2, decimals=0, low=0)
        except ValueError:
            return None
        return mc_item("On how many of these days was the precipitation more than 2 mm?", key, wrong, rng=rng,
                       series=[series(values, name="precipitation", unit="mm")])
    return make


def peak_day_item(window: Window) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values, keyed = window(TEMP_MAX, start, size)
        day = int(np.argmax(keyed)) + 1
        wrong = [int(d) for d in rng.choice([d for d in range(1, size + 1) if d != day], size=3, replace=False)]
        return mc_item("Counting the first day as day 1, on which day was the maximum temperature highest?",
                       f"day {day}", [f"day {d}" for d in wrong], rng=rng,
                       series=[series(values, name="temp_max", unit="°C")])
    return make


def peak_date_item(late: int = 0) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values = TEMP_MAX[start:start + size]
        stamps = DATES[start:start + size]
        peak = DATES[start + int(np.argmax(values)) + late]
        try:
            key, wrong = date_options(peak, rng=rng, spread_days=4, low=stamps[0], high=stamps[-1])
        except ValueError:
            return None
        return mc_item("On which date was the daily maximum temperature highest?", key, wrong, rng=rng,
                       series=[series(values, name="temp_max", timestamps=stamps, unit="°C")])
    return make


def change_between_item(late: int = 0) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    """The change between two dates the question names, inside a longer stretch shown (`late`: the key
    reads the later day one day late)."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        i, j = sorted(int(x) for x in rng.choice(size - 1, size=2, replace=False))
        change = float(TEMP_MIN[start + j + late] - TEMP_MIN[start + i])
        try:
            key, wrong = numeric_options(change, rng=rng, spread=1.5, decimals=1, unit="°C")
        except ValueError:
            return None
        return mc_item(f"By how much did the daily minimum temperature change from {DATES[start + i]} to "
                       f"{DATES[start + j]} (later minus earlier)?", key, wrong, rng=rng,
                       series=[series(TEMP_MIN[start:start + size], name="temp_min",
                                      timestamps=DATES[start:start + size], unit="°C")])
    return make


def half_wrong(rng: np.random.Generator) -> dict[str, Any]:
    return mean_item(same if rng.random() < 0.5 else shifted)(rng)


@pytest.mark.parametrize("make", [mean_item(same), count_item(same), peak_day_item(same), peak_date_item(),
                                  change_between_item()],
                         ids=["mean", "count above a threshold", "day of the max", "date of the max",
                              "change between two named dates"])
def test_keys_computed_on_the_values_shown_pass(make: Callable[..., Any]) -> None:
    found = finding(audit(make))
    assert found.passed and found.message.startswith("240 of 240"), found.message


@pytest.mark.parametrize("make", [mean_item(shifted), count_item(shifted), peak_day_item(shifted),
                                  peak_date_item(late=1), mean_item(same, key_column=TEMP_MIN),
                                  mean_item(whole_record), half_wrong, change_between_item(late=1)],
                         ids=["mean on a window shifted by a day", "count on a shifted window",
                              "day of the max on a shifted window", "date of the max a day late",
                              "mean of temp_min under temp_max", "mean of the whole record", "wrong on half",
                              "change to the day after the named one"])
def test_keys_that_are_no_reading_of_the_asked_statistic_fail(make: Callable[..., Any]) -> None:
    found = finding(audit(make))
    assert not found.passed, found.message
    assert "not the" in found.message and "compute the key from exactly the values shown" in found.message


def test_questions_the_audit_cannot_recompute_are_not_told() -> None:
    rng = np.random.default_rng(0)
    values = TEMP_MAX[:30]
    beats = Item.model_validate(mc_item("How many heartbeats are in this stretch?", "31", ["29", "33", "35"], rng=rng,
                                        series=[series(values, name="ecg")]))
    labels = Item.model_validate(mc_item("Which series has the highest mean?", "series 2",
                                         ["series 1", "series 3", "series 4"], rng=rng,
                                         series=[series(values, name=f"series {i}") for i in range(1, 5)]))
    rate = Item.model_validate(mc_item("What is the average heart rate over this stretch?", "72 beats per minute",
                                       ["69 beats per minute", "75 beats per minute", "80 beats per minute"], rng=rng,
                                       series=[series(values, name="ECG lead MLII", unit="mV")]))
    years = Item.model_validate(mc_item("In which year did the most precipitation fall over these days?", "2014",
                                        ["2012", "2013", "2015"], rng=rng,
                                        series=[series(values, name=f"precipitation {y}") for y in range(2012, 2016)]))
    assert recompute(beats) is None and recompute(labels) is None and recompute(rate) is None
    assert recompute(years) is None  # the options name the series: labels, not amounts


# --- the numbers the question prints are the numbers used ------------------------------------------------

MACRO = np.round(RECORD.normal(0.3, 0.5, 2000), 6)  # monthly changes in percent, six decimals


def threshold_count(printed: int, unrounded: bool) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    """"How many months rose more than t%?" with t a value of the window (as `draw_threshold` draws it),
    printed with `printed` decimals; the key counts against t as drawn (`unrounded`) or as printed."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values = MACRO[start:start + size]
        drawn = float(values[int(rng.integers(size))])
        used = drawn if unrounded else round(drawn, printed)
        try:
            key, wrong = numeric_options(int((values > used).sum()), rng=rng, spread=2, decimals=0, low=0)
        except ValueError:
            return None
        return mc_item(f"In how many of these months was the change above {drawn:.{printed}f}%?", key, wrong, rng=rng,
                       series=[series(values, name="change", unit="%")])
    return make


def test_a_count_keyed_against_the_unrounded_threshold_fails() -> None:
    found = finding(audit(threshold_count(3, unrounded=True)))
    assert not found.passed, found.message


@pytest.mark.parametrize("printed", [3, 6])
def test_a_count_keyed_against_the_printed_threshold_passes(printed: int) -> None:
    found = finding(audit(threshold_count(printed, unrounded=False)))
    assert found.passed, found.message


def test_a_count_over_changes_under_a_question_about_values_fails() -> None:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values = RAIN[start:start + size]
        try:
            key, wrong = numeric_options(int((np.diff(values) > 2).sum()), rng=rng, spread=2, decimals=0, low=0)
        except ValueError:
            return None
        return mc_item("On how many of these days was the precipitation more than 2 mm?", key, wrong, rng=rng,
                       series=[series(values, name="precipitation", unit="mm")])
    assert not finding(audit(make)).passed


def test_a_count_of_rises_under_a_question_about_changes_passes() -> None:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values = TEMP_MAX[start:start + size]
        try:
            key, wrong = numeric_options(int((np.diff(values) > 3).sum()), rng=rng, spread=2, decimals=0, low=0)
        except ValueError:
            return None
        return mc_item("On how many days did the maximum temperature rise by more than 3 °C from the day before?", key,
                       wrong, rng=rng, series=[series(values, name="temp_max", unit="°C")])
    found = finding(audit(make))
    assert found.passed and found.message.startswith("240 of 240"), found.message


def test_a_mean_over_the_last_days_the_question_names_passes() -> None:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size, last = int(rng.integers(0, 1900)), int(rng.integers(20, 40)), int(rng.integers(5, 10))
        values = TEMP_MAX[start:start + size]
        key, wrong = numeric_options(float(values[-last:].mean()), rng=rng, spread=1.0, decimals=1, unit="°C")
        return mc_item(f"What was the average daily maximum temperature over the last {last} days shown?", key, wrong,
                       rng=rng, series=[series(values, name="temp_max", unit="°C")])
    found = finding(audit(make))
    assert found.passed and found.message.startswith("240 of 240"), found.message


def test_the_reading_that_matches_the_key_decides_ambiguity() -> None:
    """The maximum of the values is the key; another option is the maximum of the changes, another
    reading: not a second right answer to "the highest value"."""
    values = [3.0, 9.0, 2.0, 4.0, 1.0, 5.0, 2.0]
    item = Item.model_validate(mc_item("What was the highest daily change in value?", "9.0", ["7.0", "1.0", "2.5"],
                                       rng=np.random.default_rng(0), series=[series(values, name="x")]))
    found = recompute(item)
    assert found is not None and found.matched and found.also_right() == []
    tie = Item.model_validate(mc_item("On which date was the value highest?", "2013-03-02",
                                      ["2013-03-04", "2013-03-05", "2013-03-06"], rng=np.random.default_rng(0),
                                      series=[series([3.0, 9.0, 2.0, 9.0, 1.0, 5.0], name="x",
                                                     timestamps=[f"2013-03-0{d}" for d in range(1, 7)])]))
    found = recompute(tie)
    assert found is not None and [tie.options[i] for i in found.also_right()] == ["2013-03-04"]


def rise_date_item(day_before: bool, wording: str) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    """The date of the largest rise, keyed on the day of the rise or the day before it."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start, size = int(rng.integers(0, 1900)), int(rng.integers(20, 40))
        values = TEMP_MAX[start:start + size]
        rises = np.diff(values)
        if (rises == rises.max()).sum() > 1:
            return None
        i = int(np.argmax(rises))
        stamps = DATES[start:start + size]
        try:
            key, wrong = date_options(stamps[i if day_before else i + 1], rng=rng, spread_days=4, low=stamps[0],
                                      high=stamps[-1])
        except ValueError:
            return None
        return mc_item(wording, key, wrong, rng=rng,
                       series=[series(values, name="temp_max", timestamps=stamps, unit="°C")])
    return make


FROM_PREVIOUS = "On which date was the rise in the daily maximum from the previous day largest?"
TO_NEXT = "On which date did the daily maximum rise the most to the next day?"


def test_the_date_of_a_change_is_the_day_the_question_says() -> None:
    assert finding(audit(rise_date_item(day_before=False, wording=FROM_PREVIOUS))).passed
    assert not finding(audit(rise_date_item(day_before=True, wording=FROM_PREVIOUS))).passed
    assert finding(audit(rise_date_item(day_before=True, wording=TO_NEXT))).passed
    unsaid = "On which date was the largest day-to-day rise in the daily maximum?"
    assert finding(audit(rise_date_item(day_before=True, wording=unsaid))).passed  # either day, unsaid


CHANGED = "By how much did the mean daily maximum change from the stretch from {a} to the one from {b}?"
EXCEEDED = "By how much did the mean of the stretch from {b} exceed the mean of the one from {a}?"


def two_years_item(offset: int = 0, wording: str = CHANGED) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    """How much the mean changed from one stretch to another of a different length (a year of 53
    weeks against one of 52); `offset` keys the second mean one row late (the wrong twin)."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        a, b = sorted(int(x) for x in rng.choice(1800, size=2, replace=False))
        first, second = TEMP_MAX[a:a + 52], TEMP_MAX[b:b + 53]
        change = float(TEMP_MAX[b + offset:b + offset + 53].mean() - first.mean())
        try:
            key, wrong = numeric_options(change, rng=rng, spread=1.0, decimals=2, unit="°C")
        except ValueError:
            return None
        return mc_item(wording.format(a=DATES[a], b=DATES[b]), key, wrong, rng=rng,
                       series=[series(first, name="temp_max first", timestamps=DATES[a:a + 52], unit="°C"),
                               series(second, name="temp_max second", timestamps=DATES[b:b + 53], unit="°C")])
    return make


@pytest.mark.parametrize("wording", [CHANGED, EXCEEDED], ids=["changed", "exceeded"])
def test_a_change_between_two_series_means_of_different_lengths_passes(wording: str) -> None:
    found = finding(audit(two_years_item(wording=wording)))
    assert found.passed and found.message.startswith("240 of 240"), found.message
    assert not finding(audit(two_years_item(offset=9, wording=wording))).passed


HOURS = [f"2010-07-{20 + d // 24:02d} {d % 24:02d}:00" for d in range(48)]


def hour_of_max_item(late: int = 0) -> Callable[[np.random.Generator], dict[str, Any] | None]:
    """"At what time ..." keyed with a clock time ("05:00") over readings stamped with date and time."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start = int(rng.integers(0, 1900))
        values = TEMP_MAX[start:start + 24]
        if (values == values.max()).sum() > 1:
            return None
        at = (int(np.argmax(values)) + late) % 24
        wrong = [int(h) for h in rng.choice([h for h in range(24) if h != at], size=3, replace=False)]
        return mc_item("At what time was the temperature highest?", f"{at:02d}:00", [f"{h:02d}:00" for h in wrong],
                       rng=rng, series=[series(values, name="temperature", timestamps=HOURS[:24], unit="°C")])
    return make


def test_a_clock_time_key_over_dated_readings_is_read_as_the_time_of_day() -> None:
    found = finding(audit(hour_of_max_item()))
    assert found.passed and found.message.startswith("240 of 240"), found.message
    assert not finding(audit(hour_of_max_item(late=2))).passed
