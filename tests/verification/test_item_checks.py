"""The item checks on dates and options (verification.audit.item_checks): the dates a question or an
option names are the ones shown (`dates_shown`), no two options say the same thing
(`distinct_options`), and no other option is also right (`ambiguous_key`).

Items are drawn in-process with the template helpers, 8 seeds of 30 as the audit draws them, from a
daily record; the correct templates are written as users write them (dates in several formats,
weekly and monthly resamples labelled by either end of their period, a forecast whose target date is
declared in context, hourly data, questions "about" a mean on data with six decimals). Each flaw is
one edit away, and each attack is the cheapest way around the check (another date format, a
trailing period, another case, another word for "approximately").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from itemsmith.items.helpers import date_options, mc_item, numeric_options, series
from itemsmith.items.schema import Item
from itemsmith.verification.audit.item_checks import Drawn, check_items
from itemsmith.verification.audit.models import Finding, ItemDraw
from itemsmith.verification.settings import AuditConfig

RECORD = np.random.default_rng(5)
DAYS = pd.date_range("2012-01-01", periods=1500, freq="D")
TEMP = pd.Series(np.round(RECORD.normal(14, 5, len(DAYS)), 1), index=DAYS)
RAIN = pd.Series(np.round(np.maximum(0, RECORD.normal(1, 4, len(DAYS))), 1), index=DAYS)
SIX = pd.Series(np.round(RECORD.normal(0.05, 0.4, len(DAYS)), 6), index=DAYS)
HOURS = pd.date_range("2015-06-01", periods=24 * 60, freq="h")
HOURLY = pd.Series(np.round(RECORD.normal(18, 4, len(HOURS)), 1), index=HOURS)

Make = Callable[[np.random.Generator], dict[str, Any] | None]


def finding(make: Make, check: str) -> Finding:
    draws = []
    for k in range(8):
        rng = np.random.default_rng([3, k])
        items: list[Item] = []
        tries = 0
        while len(items) < 30 and tries < 3000:
            tries += 1
            raw = make(rng)
            if raw is not None:
                items.append(Item.model_validate(raw))
        draws.append(ItemDraw(seed=k, num_samples=len(items), items=items))
    return next(f for f in check_items(Drawn.of(draws), AuditConfig()) if f.check == check)


def window(rng: np.random.Generator, column: pd.Series = TEMP, low: int = 15, high: int = 40) -> pd.Series:
    size = int(rng.integers(low, high))
    start = int(rng.integers(0, len(column) - size))
    return column.iloc[start:start + size]


def mean_between(fmt: str = "%Y-%m-%d", before: int = 0, context: bool = False) -> Make:
    """"What was the mean from A to B?" with A and B written in `fmt`; `before` names that many days
    before the first day shown (the day before the window, as a trading calendar gets wrong)."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng)
        first = part.index[0] - pd.Timedelta(days=before)
        try:
            key, wrong = numeric_options(float(part.mean()), rng=rng, spread=1.0, decimals=1, unit="°C")
        except ValueError:
            return None
        return mc_item(f"What was the mean daily maximum temperature from {first.strftime(fmt)} to "
                       f"{part.index[-1].strftime(fmt)}?", key, wrong, rng=rng,
                       context=f"The stretch shown starts on {first.strftime(fmt)}." if context else None,
                       series=[series(part.to_numpy(), name="temp_max", unit="°C",
                                      timestamps=list(part.index.strftime("%Y-%m-%d")))])
    return make


def peak_date(fmt: str = "%Y-%m-%d", outside: bool = False) -> Make:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, low=20)
        values = part.to_numpy()
        if (values == values.max()).sum() > 1:
            return None
        peak = part.index[int(np.argmax(values))]
        low, high = part.index[0], part.index[-1] + pd.Timedelta(days=6 if outside else 0)
        try:
            key, wrong = date_options(peak, rng=rng, spread_days=4, low=low, high=high, fmt=fmt)
        except ValueError:
            return None
        return mc_item("On which day was the daily maximum temperature highest?", key, wrong, rng=rng,
                       series=[series(values, name="temp_max", unit="°C",
                                      timestamps=list(part.index.strftime("%Y-%m-%d")))])
    return make


def weekly_totals_from_the_first_monday(rng: np.random.Generator) -> dict[str, Any] | None:
    """Weekly totals labelled by the week's last day (pandas' default), the question naming the first
    Monday: the first label is the Sunday after it."""
    start = int(rng.integers(0, 1200)) // 7 * 7 + 1  # 2012-01-02 is a Monday
    part = RAIN.iloc[start:start + 7 * int(rng.integers(5, 12))]
    weekly = part.resample("W").sum()
    key, wrong = numeric_options(float(weekly.max()), rng=rng, spread=4.0, decimals=1, unit="mm", low=0)
    return mc_item(f"Weekly precipitation totals from {part.index[0]:%B %d, %Y} to {part.index[-1]:%B %d, %Y}. What "
                   "was the largest weekly total?", key, wrong, rng=rng,
                   series=[series(weekly.to_numpy(), name="weekly precipitation", unit="mm",
                                  timestamps=list(weekly.index.strftime("%Y-%m-%d")),
                                  derived="weekly total of precipitation")])


def wettest_month(months: int = 4, extra: bool = False) -> Make:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        start = int(rng.integers(0, 40))
        first = pd.Timestamp("2012-01-01") + pd.DateOffset(months=start)
        part = RAIN.loc[first:first + pd.DateOffset(months=months) - pd.Timedelta(days=1)]
        totals = part.resample("MS").sum()
        if (totals == totals.max()).sum() > 1:
            return None
        names = [f"{t:%B}" for t in totals.index]
        key = names[int(np.argmax(totals.to_numpy()))]
        wrong = [n for n in names if n != key][:3]
        if extra:  # a month that is not shown in place of one that is
            wrong[-1] = f"{first - pd.DateOffset(months=1):%B}"
        return mc_item("Which month had the most precipitation?", key, wrong, rng=rng,
                       series=[series(part.to_numpy(), name="precipitation", unit="mm",
                                      timestamps=list(part.index.strftime("%Y-%m-%d")))])
    return make


def forecast(declared: bool) -> Make:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng)
        target = part.index[-1] + pd.Timedelta(days=1)
        nxt = float(TEMP.loc[target])
        try:
            key, wrong = numeric_options(nxt, rng=rng, spread=3.0, decimals=1, unit="°C")
        except ValueError:
            return None
        return mc_item(f"What was the daily maximum temperature on {target:%Y-%m-%d}, the day after the stretch?",
                       key, wrong, rng=rng, context=f"Forecast target: {target:%Y-%m-%d}." if declared else None,
                       series=[series(part.to_numpy(), name="temp_max", unit="°C",
                                      timestamps=list(part.index.strftime("%Y-%m-%d")))])
    return make


def hourly_peak_hour(rng: np.random.Generator) -> dict[str, Any] | None:
    day = int(rng.integers(0, 59))
    part = HOURLY.iloc[24 * day:24 * day + 24]
    values = part.to_numpy()
    if (values == values.max()).sum() > 1:
        return None
    peak = part.index[int(np.argmax(values))]
    others = [t for t in part.index if t != peak]
    wrong = [others[int(i)] for i in rng.choice(len(others), size=3, replace=False)]
    return mc_item(f"At what time on {part.index[0]:%b %d, %Y} was it warmest?", f"{peak:%H:%M}",
                   [f"{t:%H:%M}" for t in wrong], rng=rng,
                   series=[series(values, name="temperature", unit="°C",
                                  timestamps=list(part.index.strftime("%Y-%m-%d %H:%M")))])


# --- dates the text names are the ones shown ------------------------------------------------------------

DATES_CORRECT = {
    "ISO range": mean_between(), "'Mar 04, 2013' range": mean_between("%b %d, %Y"),
    "'4 March 2013' range": mean_between("%d %B %Y"), "date options in the window": peak_date(),
    "date options as 'Mar 04, 2013'": peak_date("%b %d, %Y"), "weekly resample labelled by Sunday":
        weekly_totals_from_the_first_monday, "month options": wettest_month(),
    "a forecast date declared in context": forecast(declared=True), "hourly": hourly_peak_hour,
}


@pytest.mark.parametrize("make", list(DATES_CORRECT.values()), ids=list(DATES_CORRECT))
def test_dates_that_are_shown_pass(make: Make) -> None:
    found = finding(make, "dates_shown")
    assert found.passed, found.message


DATES_FLAWED = {
    "the day before the window": mean_between(before=1),
    "the day before the window, written 'March 03, 2013'": mean_between("%B %d, %Y", before=1),
    "the day before the window, written '03.03.2013'": mean_between("%d.%m.%Y", before=1),
    "the day before the window, written '3rd of March'": mean_between("%d of %B %Y", before=1),
    "a date option after the window": peak_date(outside=True),
    "a month option not shown": wettest_month(extra=True),
    "a forecast date not declared": forecast(declared=False),
}


@pytest.mark.parametrize("make", list(DATES_FLAWED.values()), ids=list(DATES_FLAWED))
def test_a_date_the_series_do_not_show_fails(make: Make) -> None:
    found = finding(make, "dates_shown")
    assert not found.passed and "names" in found.message and "context=" in found.message, found.message


def test_the_date_failure_says_which_date_and_what_is_shown() -> None:
    message = finding(mean_between(before=1), "dates_shown").message
    assert "the question names '20" in message and "but the series shown cover" in message


def test_the_context_cannot_declare_a_date_it_does_not_write() -> None:
    assert not finding(mean_between(before=1, context=False), "dates_shown").passed
    assert finding(mean_between(before=1, context=True), "dates_shown").passed  # written in context: declared


# --- options that say the same thing ----------------------------------------------------------------------


def with_options(key: str, wrong: list[str], question: str = "Which month had the most rain?") -> Make:
    def make(rng: np.random.Generator) -> dict[str, Any]:
        part = window(rng, RAIN)
        return mc_item(question, key, wrong, rng=rng, series=[series(part.to_numpy(), name="precipitation", unit="mm")])
    return make


@pytest.mark.parametrize(("key", "wrong"), [
    ("July", ["Jul", "August", "June"]), ("July", ["JULY.", "August", "June"]), ("July", ["JUL", "Aug", "Jun"]),
    ("2013-03-04", ["Mar 4, 2013", "2013-03-05", "2013-03-06"]), ("2013-03-04", ["4 March 2013", "5 March 2013",
                                                                               "6 March 2013"]),
    ("0.50", ["0.5", "0.6", "0.7"]), ("0.5", [".5", "0.6", "0.7"]), ("12 °C", ["12 degC", "13 °C", "14 °C"]),
    ("Upward trend", ["upward-trend.", "Downward trend", "No trend"]), ("Monday", ["Mon.", "Tuesday", "Friday"]),
    ("2013-03-04 to 2013-03-10", ["Mar 4, 2013 - Mar 10, 2013", "2013-03-11 to 2013-03-17", "2013-03-18 to 2013-03-24"]),
    ("March 2013", ["2013-03-15", "2013-04-15", "2013-05-15"]), ("11.4%", ["0.114", "9.8%", "13.1%"]),
    ("-3.5 percent", ["-0.035", "-2.0 percent", "1.5 percent"]),
])
def test_two_options_that_say_the_same_thing_fail(key: str, wrong: list[str]) -> None:
    found = finding(with_options(key, wrong), "distinct_options")
    assert not found.passed and "say the same thing" in found.message, found.message


@pytest.mark.parametrize(("key", "wrong"), [
    ("July", ["August", "June", "May"]), ("2013-03-04", ["2013-03-05", "2013-03-11", "2013-04-04"]),
    ("0.5", ["0.55", "0.6", "5"]), ("12 °C", ["12 °F", "13 °C", "12 mm"]), ("50%", ["50", "0.5 mm", "25%"]),
    ("Upward trend", ["Downward trend", "No trend", "Upward then downward"]),
    ("Series 1 with trend", ["Series 1 with noise", "Series 2 with trend", "Series 2 with noise"]),
])
def test_options_that_differ_pass(key: str, wrong: list[str]) -> None:
    found = finding(with_options(key, wrong), "distinct_options")
    assert found.passed, found.message


# --- another option also right ----------------------------------------------------------------------------


def tied_peak(both_options: bool) -> Make:
    """The day of the maximum where two days share it: the other day is an option, or is not."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, low=20).copy()
        values = part.to_numpy().copy()
        top = np.argsort(values)[-2:]
        values[top[0]] = values[top[1]]  # two days share the maximum
        days = list(part.index.strftime("%Y-%m-%d"))
        key = days[int(np.argmax(values))]
        other = days[int([i for i in top if days[i] != key][0])]
        pool = [d for d in days if d not in (key, other)]
        wrong = [pool[int(i)] for i in rng.choice(len(pool), size=3 if not both_options else 2, replace=False)]
        wrong = wrong + [other] if both_options else wrong
        return mc_item("On which date was the daily maximum temperature highest?", key, wrong, rng=rng,
                       series=[series(values, name="temp_max", unit="°C", timestamps=days)])
    return make


def mean_options(gap: float, decimals: int, data: pd.Series = TEMP, word: str = "approximately") -> Make:
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, data)
        mean = float(part.mean())
        key = round(mean, decimals)
        offsets = [k for k in (-2, -1, 1, 2) if k][: 3]
        wrong = [f"{key + gap * k:.{decimals}f}" for k in offsets]
        return mc_item(f"What is {word} the mean of the values shown?", f"{key:.{decimals}f}", wrong, rng=rng,
                       series=[series(part.to_numpy(), name="temp_max" if data is TEMP else "change")])
    return make


def share_options(rng: np.random.Generator) -> dict[str, Any] | None:
    part = window(rng, RAIN)
    share = 100 * float((part.to_numpy() > 2).mean())
    return mc_item("What percentage of the days had more than 2 mm of precipitation?", f"{share:.1f}%",
                   [f"{share:.0f}%", f"{share + 7:.1f}%", f"{share + 14:.1f}%"], rng=rng,
                   series=[series(part.to_numpy(), name="precipitation", unit="mm")])


@pytest.mark.parametrize("make", [tied_peak(both_options=True), mean_options(0.02, 2), mean_options(0.02, 2, word="roughly"),
                                  mean_options(0.03, 2, word="about"), mean_options(0.2, 1), mean_options(0.01, 2, data=SIX),
                                  share_options],
                         ids=["two tied days both options", "approximately, options 0.02 apart over one decimal",
                              "roughly", "about", "approximately, options two tenths apart",
                              "six-decimal data, options 0.01 apart", "a share two options round to"])
def test_a_key_another_option_also_satisfies_fails(make: Make) -> None:
    found = finding(make, "ambiguous_key")
    assert not found.passed and "also right" in found.message, found.message


@pytest.mark.parametrize("make", [tied_peak(both_options=False), mean_options(0.3, 1), mean_options(0.3, 2),
                                  mean_options(0.02, 2, word="exactly"), mean_options(0.02, 3, data=SIX)],
                         ids=["a tie whose other day is no option", "approximately, options three tenths apart",
                              "approximately, options 0.3 apart", "no approximately", "six-decimal data"])
def test_a_key_no_other_option_satisfies_passes(make: Make) -> None:
    found = finding(make, "ambiguous_key")
    assert found.passed, found.message


def test_a_mean_half_way_between_two_adjacent_options_is_ambiguous() -> None:
    """Options one rounding step apart: a mean that falls exactly half-way (14.95 over 14.9 and 15.0,
    which a mean of one-decimal values often does) rounds to either, and the data shown cannot decide."""
    found = finding(mean_options(0.1, 1), "ambiguous_key")
    assert not found.passed and "where '" in found.message


def rainiest_week(skip_ties: bool) -> Make:
    """"Which week had the most rainy days?" over four weeks shown as channels named like the options."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        starts = sorted(int(s) for s in rng.choice(200, size=4, replace=False))
        weeks = {f"week of {DAYS[7 * s]:%b %d, %Y}": RAIN.iloc[7 * s:7 * s + 7] for s in starts}
        counts = {name: int((w.to_numpy() > 0).sum()) for name, w in weeks.items()}
        best = max(counts, key=lambda n: counts[n])
        if skip_ties and sum(c == counts[best] for c in counts.values()) > 1:
            return None
        return mc_item("Which week had the most days with precipitation above 0 mm?", best,
                       [n for n in weeks if n != best], rng=rng,
                       series=[series(w.to_numpy(), name=n, unit="mm") for n, w in weeks.items()])
    return make


def total_band(overlapping: bool) -> Make:
    """"In which range does the total lie?" with bands 10 mm wide, 5 apart (overlapping) or 10 apart."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, RAIN)
        total = float(part.sum())
        step = 5 if overlapping else 10
        first = int(total // 10) * 10 - step * int(rng.integers(0, 4))
        if first < 0:
            return None
        bands = [(first + step * k, first + step * k + 10) for k in range(4)]
        key = next((b for b in bands if b[0] <= total < b[1]), None)
        if key is None:
            return None
        return mc_item("In which range does the total precipitation of these days lie?", f"{key[0]}-{key[1]} mm",
                       [f"{a}-{b} mm" for a, b in bands if (a, b) != key], rng=rng,
                       series=[series(part.to_numpy(), name="precipitation", unit="mm")])
    return make


def test_channels_named_as_options_that_tie_on_the_asked_statistic_are_ambiguous() -> None:
    found = finding(rainiest_week(skip_ties=False), "ambiguous_key")
    assert not found.passed and "week of" in found.message
    assert finding(rainiest_week(skip_ties=True), "ambiguous_key").passed


def test_overlapping_ranges_that_both_hold_the_value_are_ambiguous() -> None:
    assert not finding(total_band(overlapping=True), "ambiguous_key").passed
    assert finding(total_band(overlapping=False), "ambiguous_key").passed  # adjacent bands share only a boundary


def test_a_which_question_whose_extreme_word_is_not_asked_is_not_read_as_ties() -> None:
    """As in the curated fat-tails template: "more frequent than under a normal distribution" describes,
    "Which one is fat-tailed?" asks; counting the values under 250 ties every channel and says nothing."""
    def make(rng: np.random.Generator) -> dict[str, Any]:
        names = [f"series {i}" for i in range(1, 5)]
        return mc_item("These are four series of 250 daily returns (percent). One comes from a distribution with "
                       "extreme moves far more frequent than under a normal distribution. Which one is fat-tailed?",
                       names[0], names[1:], rng=rng,
                       series=[series(np.round(rng.normal(size=250), 3), name=n, unit="%") for n in names])
    assert finding(make, "ambiguous_key").passed


MONTHLY = pd.Series(np.round(RECORD.normal(300, 40, 144)), index=pd.date_range("1949-01-01", periods=144, freq="MS"))
MONTHLY.iloc[6] = MONTHLY.iloc[7] = MONTHLY.iloc[:12].max() + 5  # 1949: July and August share the peak


def busiest_month(label: str, skip_ties: bool = True, key: str = "max") -> Make:
    """"Which month of this stretch had the most passengers?" over monthly data, the options written
    as periods ("July", "July 1949", "1949 Q3" is not used: a stretch has several of each quarter), the
    runners-up as distractors (the hardest wrong answers; a tie then puts the other peak among them)."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, MONTHLY, 6, 12)
        values = part.to_numpy(dtype=float)
        ranked = np.argsort(-values if key == "max" else values, kind="stable")
        if skip_ties and values[ranked[0]] == values[ranked[1]]:
            return None
        names = [d.strftime(label) for d in part.index]
        return mc_item(f"The series gives the monthly number of airline passengers (thousands) from {names[0]} to "
                       f"{names[-1]}. In which month were there the most passengers?",
                       names[int(ranked[0])], [names[int(i)] for i in ranked[1:4]], rng=rng,
                       series=[series(values, name="passengers", timestamps=[f"{d:%Y-%m-%d}" for d in part.index])])
    return make


@pytest.mark.parametrize("label", ["%B %Y", "%b %Y", "%Y-%m"])
def test_a_period_key_is_the_period_of_the_peak(label: str) -> None:
    """The month a question asks for is read off the timestamps shown: a sound key passes, the month of
    the minimum does not, and a peak two months share makes the item ambiguous."""
    assert finding(busiest_month(label), "key_is_statistic").passed
    wrong = finding(busiest_month(label, key="min"), "key_is_statistic")
    assert not wrong.passed and "period" in wrong.message
    assert not finding(busiest_month(label, skip_ties=False), "ambiguous_key").passed


def peak_weekday_of_means(rng: np.random.Generator) -> dict[str, Any] | None:
    """"On which weekday is the mean temperature highest?" over daily data: a period coarser than the
    readings is read by the mean of the days it holds, not by the single warmest day."""
    part = TEMP.iloc[int(rng.integers(0, 1000)):][:70]
    means = part.groupby(part.index.dayofweek).mean()
    best = int(means.idxmax())
    if np.sort(means.to_numpy())[-2] > means.max() - 0.05:
        return None
    names = list(pd.Series(pd.date_range("2024-01-01", periods=7)).dt.day_name())
    return mc_item("Daily mean temperature (°C) over ten weeks. On which weekday is the average temperature highest?",
                   names[best], [n for i, n in enumerate(names) if i != best][:3], rng=rng,
                   series=[series(part.to_numpy(), name="temp", timestamps=[f"{d:%Y-%m-%d}" for d in part.index])])


def test_a_weekday_key_is_read_by_the_mean_of_its_days() -> None:
    assert finding(peak_weekday_of_means, "key_is_statistic").passed
    assert finding(peak_weekday_of_means, "ambiguous_key").passed


def day_above(distractors_below: bool, asking: str = "On which of these dates was the maximum above {t} °C?") -> Make:
    """A date that meets a printed bound, the distractors below it (sound) or any other days (two right)."""
    def make(rng: np.random.Generator) -> dict[str, Any] | None:
        part = window(rng, TEMP, 25, 31)
        values = part.to_numpy(dtype=float)
        threshold = float(np.round(np.quantile(values, 0.6)))
        above = np.flatnonzero(values > threshold)
        pool = np.flatnonzero(values <= threshold) if distractors_below else np.delete(np.arange(len(values)), above[0])
        if not len(above) or len(pool) < 3:
            return None
        dates = [f"{d:%Y-%m-%d}" for d in part.index]
        key = int(above[0]) if "first" in asking else int(rng.choice(above))
        wrong = [dates[int(i)] for i in rng.choice(pool[pool != key], size=3, replace=False)]
        return mc_item(f"Daily maximum temperature (°C) from {dates[0]} to {dates[-1]}. " + asking.format(t=threshold),
                       dates[key], wrong, rng=rng, series=[series(values, name="temp_max", timestamps=dates)])
    return make


def test_a_date_meeting_the_printed_bound_is_read_as_such() -> None:
    """"On which of these dates was the maximum above 22 °C?" asks for a day that meets the bound, not for
    the day of the maximum: a sound key passes both checks, and distractors drawn from every other day
    make two options right."""
    assert finding(day_above(True), "key_is_statistic").passed
    assert finding(day_above(True), "ambiguous_key").passed
    ambiguous = finding(day_above(False), "ambiguous_key")
    assert not ambiguous.passed and "also right" in ambiguous.message


def test_the_first_date_above_a_bound_is_not_read_as_any_date_above_it() -> None:
    first = day_above(False, "On which date was the maximum above {t} °C for the first time?")
    assert finding(first, "ambiguous_key").passed
