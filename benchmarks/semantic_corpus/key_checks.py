"""Independent key checks of the users' corpus (`good_users/`, and the flawed edits of it).

One checker per correct template, written from what the question says, never from the template's
code: it parses the records, dates, channel, threshold or window the question names, reads those
from the handler (loaded here, on the host, like any user would), recomputes the answer and says
which options are correct. An item is wrong when the keyed option is not correct, when another
option is correct too (a tie, two options that say the same thing), or when the series shown is
not the named data at its timestamps (a shifted, other-record or lying derived series).

    python benchmarks/semantic_corpus/key_checks.py                 # every correct template, 5 seeds x 20 items
    python benchmarks/semantic_corpus/key_checks.py --flawed        # the flawed edits, each with its base's checker
    python benchmarks/semantic_corpus/key_checks.py --only co2_week_of_max --seeds 2 --items 5

Each run also feeds every checker its own items with the key moved to the next option (a control:
on a correct template every such item must be reported wrong), and writes the counts to
benchmarks/results/semantic_corpus_key_checks.json or ..._flawed.json (`--json-out` to change,
`--no-write` to print only; a run with `--only` replaces those templates' rows). Items come from
`itemsmith sample --json` (the template runs in the sandbox; nothing here verifies or audits).
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import functools
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.handlers import resolve_handler

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "semantic_corpus_key_checks.json"
FOLDERS = ("good_users/", "flawed_users/")

Item = dict[str, Any]
Checker = Callable[[Item, "Data"], list[str]]
CHECKERS: dict[str, Checker] = {}

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]


def checker(fn: Checker) -> Checker:
    """Register `fn` as the checker of the template named like it (without `check_`)."""
    CHECKERS[fn.__name__.removeprefix("check_")] = fn
    return fn


# --- the data, as the handler gives it ------------------------------------------------------------


class Data:
    """A handler's records, loaded once; columns concatenated over records in time order."""

    def __init__(self, spec: str) -> None:
        self.handler = resolve_handler(str(ROOT / spec) if spec.endswith(".py") else spec)
        self.ids = [str(r) for r in self.handler.records()["record_id"]]

    @functools.cache  # noqa: B019 - one Data per handler for the whole run
    def frame(self, rid: str) -> pd.DataFrame:
        return self.handler.series(rid)

    @functools.cache  # noqa: B019
    def column(self, channel: str, prefix: str = "") -> pd.Series:
        """`channel` of every record whose id starts with `prefix`, in time order."""
        parts = [self.frame(r)[channel] for r in self.ids if r.startswith(prefix)]
        return pd.concat(parts).sort_index()

    def between(self, channel: str, first: Any, last: Any, prefix: str = "") -> pd.Series:
        col = self.column(channel, prefix)
        return col[(col.index >= first) & (col.index <= last)]


# --- reading options -------------------------------------------------------------------------------


def number(text: str) -> float:
    found = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    if found is None:
        raise ValueError(f"no number in option {text!r}")
    return float(found.group())


def decimals(text: str) -> int:
    found = re.search(r"-?\d+(?:\.(\d+))?", text)
    return len(found.group(1) or "") if found else 0


def month_of(text: str) -> int | None:
    """1-12 for a month name or its abbreviation ('Jul', 'Jul.', 'July'), else None."""
    word = text.strip().rstrip(".").lower()
    for i, name in enumerate(MONTHS):
        if word == name or (len(word) >= 3 and name.startswith(word)):
            return i + 1
    return None


def month_year(text: str) -> tuple[int, int] | None:
    """(year, month) of 'March 1973' or 'Mar 1973', else None."""
    found = re.fullmatch(r"\s*([A-Za-z]+)\.?\s+(\d{4})\s*", text)
    if not found or month_of(found.group(1)) is None:
        return None
    return int(found.group(2)), month_of(found.group(1))  # type: ignore[return-value]


DATE_FORMATS = ("%Y-%m-%d", "%b %d, %Y", "%B %d, %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d", "%m/%d/%Y")


def day_of(text: str) -> dt.date | None:
    for fmt in DATE_FORMATS:
        try:
            return dt.datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    return None


def quarter_of(text: str) -> tuple[int, int] | None:
    found = re.fullmatch(r"\s*(\d{4})\s*Q([1-4])\s*", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def quarter_start(label: str) -> pd.Timestamp:
    year, q = quarter_of(label)  # type: ignore[misc]
    return pd.Timestamp(year=year, month=3 * q - 2, day=1)


# --- verdicts --------------------------------------------------------------------------------------


def verdict(item: Item, correct: list[bool], what: str = "") -> list[str]:
    """Problems unless exactly the keyed option is correct."""
    options, key = item["options"], item["answer_index"]
    right = [o for o, c in zip(options, correct) if c]
    problems = []
    if len(right) > 1:
        problems.append(f"{len(right)} options are correct: {right}")
    if not correct[key]:
        problems.append(f"key {options[key]!r} is wrong; correct: {right or 'none'}{what}")
    return problems


def numeric_verdict(item: Item, truth: float, what: str = "") -> list[str]:
    """Each option is correct when it is `truth` written to its decimals; under "approximately" (or
    "about"), to one decimal fewer: a reader need not tell options apart finer than that."""
    options = item["options"]
    approx = re.search(r"\b(approximately|roughly|about)\b", item["question"], re.I) is not None
    correct = []
    for option in options:
        places = decimals(option) - (1 if approx else 0)
        correct.append(abs(number(option) - truth) <= 0.5 * 10.0 ** -places + 1e-9)
    return verdict(item, correct, f" (recomputed {truth:.6g}{what})")


def tf_verdict(item: Item, truth: bool) -> list[str]:
    return verdict(item, [o == ("True" if truth else "False") for o in item["options"]],
                   f" (the statement is {truth})")


def same_meaning(item: Item, meaning: Callable[[str], Any]) -> list[str]:
    """Two options that denote the same thing (a month, a date, a value) once read."""
    read = [meaning(o) for o in item["options"]]
    seen = [r for r in read if r is not None]
    if len(set(seen)) < len(seen):
        return [f"options {item['options']} denote the same thing twice"]
    return []


# --- the series shown ------------------------------------------------------------------------------


def shown_at(channel: Item, index: pd.Index) -> bool:
    """The channel's timestamps are exactly `index` (dates and times, or seconds for a numeric index)."""
    raw = channel.get("timestamps") or []
    if len(raw) != len(index):
        return False
    if isinstance(index, pd.DatetimeIndex):
        return all(pd.Timestamp(t) == at for t, at in zip(raw, index))
    return bool(np.allclose([float(t) for t in raw], index.to_numpy(dtype=float), rtol=0, atol=1e-5))


def shows(item: Item, index: int, expected: pd.Series, name: str, atol: float = 1e-9) -> list[str]:
    """The item's channel `index` is exactly `expected`: the same timestamps, the same value at each."""
    if index >= len(item["series"]):
        return [f"no series {index} ({name}) is shown"]
    channel = item["series"][index]
    if not shown_at(channel, expected.index):
        return [f"series {channel['name']!r} is not shown at the timestamps of {name} "
                f"({len(channel.get('timestamps') or [])} shown, {len(expected)} named)"]
    close = np.isclose(channel["values"], expected.to_numpy(dtype=float), rtol=0, atol=atol)
    if not close.all():
        bad = int(np.argmin(close))
        return [f"series {channel['name']!r} at {expected.index[bad]} shows {channel['values'][bad]} but {name} has "
                f"{expected.iloc[bad]}"]
    return []


def grab(pattern: str, text: str) -> tuple[str, ...]:
    found = re.search(pattern, text, re.S)
    if found is None:
        raise ValueError(f"the question does not say {pattern!r}: {text[:160]!r}")
    return found.groups()


# --- airline passengers ----------------------------------------------------------------------------


def months_named(first: str, last: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    (y1, m1), (y2, m2) = month_year(first), month_year(last)  # type: ignore[misc]
    return pd.Timestamp(year=y1, month=m1, day=1), pd.Timestamp(year=y2, month=m2, day=1)


def peak_month_of_year(item: Item, data: Data, channel: str, year: str) -> list[str]:
    values = data.frame(year)[channel]
    top = values.max()
    correct = [month_of(o) is not None and values.iloc[month_of(o) - 1] == top for o in item["options"]]
    return (shows(item, 0, values, f"{channel} of {year}") + same_meaning(item, month_of)
            + verdict(item, correct))


@checker
def check_airline_peak_month(item: Item, data: Data) -> list[str]:
    (year,) = grab(r"in (\d{4})\.", item["question"])
    return peak_month_of_year(item, data, "passengers", year)


def peak_month_of_stretch(item: Item, data: Data, channel: str) -> list[str]:
    first, last = grab(r"(?:from )?([A-Z][a-z]+ \d{4}) to ([A-Z][a-z]+ \d{4})", item["question"])
    lo, hi = months_named(first, last)
    part = data.between(channel, lo, hi)
    top = part.max()

    def right(option: str) -> bool:
        ym = month_year(option)
        if ym is None:
            return False
        at = pd.Timestamp(year=ym[0], month=ym[1], day=1)
        return at in part.index and part[at] == top

    return (shows(item, 0, part, f"{channel} from {first} to {last}") + same_meaning(item, month_year)
            + verdict(item, [right(o) for o in item["options"]]))


@checker
def check_airline_peak_month_window(item: Item, data: Data) -> list[str]:
    return peak_month_of_stretch(item, data, "passengers")


@checker
def check_airline_span_total_change(item: Item, data: Data) -> list[str]:
    m1, m2, y1, y2 = grab(r"from (\w{3}) to (\w{3}) of (\d{4}) and of (\d{4})", item["question"])
    start, end = grab(r"change from (\d{4}) to (\d{4})\?", item["question"])
    spans = {}
    for year in (y1, y2):
        part = data.frame(year)["passengers"]
        spans[year] = part[(part.index.month >= month_of(m1)) & (part.index.month <= month_of(m2))]
    truth = 100 * (spans[end].sum() / spans[start].sum() - 1)
    return (shows(item, 0, spans[y1], f"{m1}-{m2} {y1}") + shows(item, 1, spans[y2], f"{m1}-{m2} {y2}")
            + same_meaning(item, percent_value) + numeric_verdict(item, truth))


def percent_value(text: str) -> float | None:
    """The value an option denotes as a fraction: '12.5%' -> 0.125, '0.125' -> 0.125."""
    try:
        value = number(text)
    except ValueError:
        return None
    return round(value / 100 if "%" in text else value, 6)


@checker
def check_airline_rolling_mean_peak(item: Item, data: Data) -> list[str]:
    first, last = grab(r"from ([A-Z][a-z]+ \d{4}) to ([A-Z][a-z]+ \d{4})", item["question"])
    (n,) = grab(r"(\d+)-month trailing mean", item["question"])
    lo, hi = months_named(first, last)
    raw = data.between("passengers", lo, hi)
    smooth = raw.rolling(int(n)).mean().dropna()
    return (shows(item, 0, raw, "the named months") + shows(item, 1, smooth, f"the {n}-month trailing mean", 1e-6)
            + numeric_verdict(item, float(smooth.max())))


@checker
def check_airline_summer_share_tf(item: Item, data: Data) -> list[str]:
    (year,) = grab(r"in (\d{4})\.", item["question"])
    (claim,) = grab(r"more than (\d+(?:\.\d+)?)%", item["question"])
    values = data.frame(year)["passengers"]
    share = 100 * values[values.index.month.isin([6, 7, 8])].sum() / values.sum()
    return shows(item, 0, values, f"passengers of {year}") + tf_verdict(item, share > float(claim))


# --- Mauna Loa CO2 ---------------------------------------------------------------------------------


@checker
def check_co2_annual_mean_difference(item: Item, data: Data) -> list[str]:
    a, b = grab(r"at Mauna Loa in (\d{4}) and in (\d{4})", item["question"])
    later, earlier = grab(r"did the mean of (\d{4}) exceed the mean of (\d{4})", item["question"])
    measured = {y: data.frame(y)["co2"].dropna() for y in {a, b, later, earlier}}
    truth = measured[later].mean() - measured[earlier].mean()
    return (shows(item, 0, measured[a], f"co2 of {a}") + shows(item, 1, measured[b], f"co2 of {b}")
            + numeric_verdict(item, float(truth)))


@checker
def check_co2_week_of_max(item: Item, data: Data) -> list[str]:
    n, first, last = grab(r"the (\d+) weeks ending (\S+) to (\S+) \(", item["question"])
    part = data.between("co2", pd.Timestamp(first), pd.Timestamp(last))
    problems = [] if len(part) == int(n) else [f"{first} to {last} holds {len(part)} weeks, not {n}"]
    top = part.max()
    correct = [day_of(o) is not None and pd.Timestamp(day_of(o)) in part.index and part[pd.Timestamp(day_of(o))] == top
               for o in item["options"]]
    return (problems + shows(item, 0, part, f"co2 {first} to {last}") + same_meaning(item, day_of)
            + verdict(item, correct))


@checker
def check_co2_trend_slope(item: Item, data: Data) -> list[str]:
    first, last = grab(r"from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})", item["question"])
    part = data.between("co2", pd.Timestamp(first), pd.Timestamp(last)).dropna()
    years = (part.index - part.index[0]).days.to_numpy(dtype=float) / 365.25
    slope = np.linalg.lstsq(np.column_stack([years, np.ones_like(years)]), part.to_numpy(dtype=float), rcond=None)[0][0]
    return shows(item, 0, part, f"measured co2 {first} to {last}") + numeric_verdict(item, float(slope))


@checker
def check_co2_seasonal_peak_month(item: Item, data: Data) -> list[str]:
    (year,) = grab(r"at Mauna Loa in (\d{4}), each week", item["question"])
    weekly = data.frame(year)["co2"].dropna()
    means = weekly.groupby(weekly.index.month).mean()
    means.index = pd.DatetimeIndex([pd.Timestamp(year=int(year), month=m, day=1) for m in means.index])
    top = means.max()
    correct = [month_of(o) is not None and bool(np.isclose(means.iloc[month_of(o) - 1], top, rtol=0, atol=1e-9))
               for o in item["options"]]
    return (shows(item, 0, weekly, f"measured co2 of {year}") + shows(item, 1, means, "the monthly means", 1e-6)
            + same_meaning(item, month_of) + verdict(item, correct))


@checker
def check_co2_stretch_mean_difference(item: Item, data: Data) -> list[str]:
    k, m, y1, a1, b1, y2, a2, b2 = grab(
        r"in weeks (\d+) to (\d+) of (\d{4}) \(weeks ending (\S+) to (\S+)\) and of (\d{4}) \(weeks ending (\S+) to (\S+)\)",
        item["question"])
    later, earlier = grab(r"mean of these weeks in (\d{4}) exceed their mean in (\d{4})", item["question"])
    weeks = {y: data.frame(y)["co2"].iloc[int(k) - 1:int(m)] for y in {y1, y2, later, earlier}}
    problems = [f"weeks {k}-{m} of {y} end {w.index[0]:%Y-%m-%d} to {w.index[-1]:%Y-%m-%d}, not {a} to {b}"
                for y, a, b in ((y1, a1, b1), (y2, a2, b2)) for w in [weeks[y]]
                if (f"{w.index[0]:%Y-%m-%d}", f"{w.index[-1]:%Y-%m-%d}") != (a, b)]
    truth = weeks[later].mean() - weeks[earlier].mean()
    return (problems + shows(item, 0, weeks[y1], f"weeks {k}-{m} of {y1}") + shows(item, 1, weeks[y2], f"weeks {k}-{m} of {y2}")
            + numeric_verdict(item, float(truth)))


def block_window(item: Item, data: Data, channel: str) -> tuple[str, pd.Series, str, str]:
    """The record and stretch a block's question names ('... of record R from A to B')."""
    rid, first, last = grab(rf"of the {channel} \([^)]*\) of record (\S+) from (\S+) to ([^?\s]+?)(?: are|\?)",
                            item["question"])
    values = data.frame(rid)[channel]
    if isinstance(values.index, pd.DatetimeIndex):
        part = values[(values.index >= pd.Timestamp(first)) & (values.index <= pd.Timestamp(last))]
    else:
        part = values[(values.index >= float(first) - 1e-9) & (values.index <= float(last) + 1e-9)]
    return rid, part, first, last


@checker
def check_co2_range_blocks(item: Item, data: Data) -> list[str]:
    rid, part, first, last = block_window(item, data, "co2")
    return shows(item, 0, part, f"co2 of {rid}") + numeric_verdict(item, float(part.max() - part.min()))


# --- Seattle hourly temperatures -------------------------------------------------------------------


@checker
def check_seattle_hour_of_daily_min(item: Item, data: Data) -> list[str]:
    (day,) = grab(r"in Seattle on (\d{4}-\d{2}-\d{2}), from 00:00 to 23:00", item["question"])
    part = data.between("temp", pd.Timestamp(day), pd.Timestamp(day) + pd.Timedelta(hours=23))
    low = part.min()
    by_clock = {t.strftime("%H:%M"): v for t, v in part.items()}
    correct = [by_clock.get(o.strip()) == low for o in item["options"]]
    return shows(item, 0, part, f"temp on {day}") + verdict(item, correct)


@checker
def check_seattle_hour_of_min_24h(item: Item, data: Data) -> list[str]:
    first, last = grab(r"for the 24 hours from (\S+ \S+) to (\S+ \S+)\.", item["question"])
    part = data.between("temp", pd.Timestamp(first), pd.Timestamp(last))
    problems = [] if len(part) == 24 else [f"{first} to {last} holds {len(part)} hours, not 24"]
    low = part.min()
    by_label = {t.strftime("%Y-%m-%d %H:%M"): v for t, v in part.items()}
    correct = [by_label.get(o.strip()) == low for o in item["options"]]
    return problems + shows(item, 0, part, f"temp {first} to {last}") + verdict(item, correct)


@checker
def check_seattle_daily_mean_peak(item: Item, data: Data) -> list[str]:
    first, last = grab(r"in Seattle from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2});", item["question"])
    hourly = data.between("temp", pd.Timestamp(first), pd.Timestamp(last) + pd.Timedelta(hours=23))
    daily = hourly.groupby(hourly.index.normalize()).mean()
    return (shows(item, 0, hourly, f"hourly temp {first} to {last}") + shows(item, 1, daily, "the daily means", 1e-6)
            + numeric_verdict(item, float(daily.max())))


@checker
def check_seattle_hours_above(item: Item, data: Data) -> list[str]:
    first, last, n = grab(r"from (\S+ \S+) to (\S+ \S+) \((\d+) readings\)", item["question"])
    (limit,) = grab(r"above (-?\d+(?:\.\d+)?) °F", item["question"])
    part = data.between("temp", pd.Timestamp(first), pd.Timestamp(last))
    problems = [] if len(part) == int(n) else [f"{first} to {last} holds {len(part)} readings, not {n}"]
    return problems + shows(item, 0, part, "the named hours") + numeric_verdict(item, float((part > float(limit)).sum()))


# --- US quarterly changes --------------------------------------------------------------------------


@checker
def check_uschange_quarters_above_blocks(item: Item, data: Data) -> list[str]:
    (channel,) = grab(r"How many values of the (\w+) ", item["question"])
    rid, part, first, last = block_window(item, data, channel)
    (limit,) = grab(r"are above (-?\d+(?:\.\d+)?)%", item["question"])
    return (shows(item, 0, part, f"{channel} of {rid}")
            + numeric_verdict(item, float((part > float(limit)).sum()), f" against the printed {limit}%"))


US_NAMES = {"real personal consumption": "consumption", "real disposable income": "income",
            "industrial production": "production", "personal savings": "savings"}


def quarters_named(item: Item) -> tuple[pd.Timestamp, pd.Timestamp]:
    first, last = grab(r"from (\d{4} Q\d) to (\d{4} Q\d)", item["question"])
    return quarter_start(first), quarter_start(last)


@checker
def check_uschange_quarter_of_lowest(item: Item, data: Data) -> list[str]:
    (name,) = grab(r"change of US ([a-z ]+?) from", item["question"])
    channel = US_NAMES[name]
    part = data.between(channel, *quarters_named(item))
    low = part.min()
    correct = [quarter_of(o) is not None and quarter_start(o) in part.index and part[quarter_start(o)] == low
               for o in item["options"]]
    return shows(item, 0, part, f"{channel} over the named quarters") + verdict(item, correct)


@checker
def check_uschange_consumption_vs_income_tf(item: Item, data: Data) -> list[str]:
    lo, hi = quarters_named(item)
    (n,) = grab(r"over these (\d+) quarters", item["question"])
    cons, inc = data.between("consumption", lo, hi), data.between("income", lo, hi)
    problems = [] if len(cons) == int(n) else [f"the named quarters are {len(cons)}, not {n}"]
    return (problems + shows(item, 0, cons, "consumption") + shows(item, 1, inc, "income")
            + tf_verdict(item, cons.mean() > inc.mean()))


@checker
def check_uschange_mean_savings(item: Item, data: Data) -> list[str]:
    part = data.between("savings", *quarters_named(item))
    return shows(item, 0, part, "savings over the named quarters") + numeric_verdict(item, float(part.mean()))


# --- El Nino SST -----------------------------------------------------------------------------------


@checker
def check_elnino_warmest_month(item: Item, data: Data) -> list[str]:
    (year,) = grab(r"of the Pacific in (\d{4})\.", item["question"])
    return peak_month_of_year(item, data, "sst", year)


@checker
def check_elnino_warmest_month_window(item: Item, data: Data) -> list[str]:
    return peak_month_of_stretch(item, data, "sst")


# --- Seattle daily weather (built-in handler) ------------------------------------------------------


def days_named(item: Item, pattern: str = r"from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})") -> tuple[str, str]:
    return grab(pattern, item["question"])  # type: ignore[return-value]


@checker
def check_weather_mean_wind(item: Item, data: Data) -> list[str]:
    first, last = days_named(item)
    part = data.between("wind", pd.Timestamp(first), pd.Timestamp(last))
    return shows(item, 0, part, f"wind {first} to {last}") + numeric_verdict(item, float(part.mean()))


@checker
def check_weather_total_precip_blocks(item: Item, data: Data) -> list[str]:
    rid, part, first, last = block_window(item, data, "precipitation")
    return shows(item, 0, part, f"precipitation of {rid}") + numeric_verdict(item, float(part.sum()))


@checker
def check_weather_warm_days_blocks(item: Item, data: Data) -> list[str]:
    rid, part, first, last = block_window(item, data, "temp_max")
    (limit,) = grab(r"are above (-?\d+(?:\.\d+)?) degC", item["question"])
    return shows(item, 0, part, f"temp_max of {rid}") + numeric_verdict(item, float((part > float(limit)).sum()))


def day_of_extreme(item: Item, part: pd.Series, extreme: float, name: str) -> list[str]:
    def right(option: str) -> bool:
        day = day_of(option)
        return day is not None and pd.Timestamp(day) in part.index and part[pd.Timestamp(day)] == extreme

    return (shows(item, 0, part, name) + same_meaning(item, day_of)
            + verdict(item, [right(o) for o in item["options"]]))


@checker
def check_weather_hottest_day(item: Item, data: Data) -> list[str]:
    first, last = days_named(item)
    part = data.between("temp_max", pd.Timestamp(first), pd.Timestamp(last))
    return day_of_extreme(item, part, part.max(), f"temp_max {first} to {last}")


@checker
def check_weather_same_month_two_years(item: Item, data: Data) -> list[str]:
    m1, y1, m2, y2 = grab(r"temperatures \(°C\) of (\w+) (\d{4}) and of (\w+) (\d{4})\.", item["question"])
    lm, ly, em, ey = grab(r"did the mean daily maximum of (\w+) (\d{4}) exceed that of (\w+) (\d{4})", item["question"])
    record = {(m, y): data.frame(f"{y}-{month_of(m):02d}")["temp_max"] for m, y in {(m1, y1), (m2, y2), (lm, ly), (em, ey)}}
    truth = record[(lm, ly)].mean() - record[(em, ey)].mean()
    return (shows(item, 0, record[(m1, y1)], f"temp_max of {m1} {y1}") + shows(item, 1, record[(m2, y2)], f"temp_max of {m2} {y2}")
            + numeric_verdict(item, float(truth)))


@checker
def check_weather_cold_nights_tf(item: Item, data: Data) -> list[str]:
    first, last = days_named(item)
    (level,) = grab(r"below (-?\d+(?:\.\d+)?) °C", item["question"])
    part = data.between("temp_min", pd.Timestamp(first), pd.Timestamp(last))
    return shows(item, 0, part, f"temp_min {first} to {last}") + tf_verdict(item, bool((part < float(level)).any()))


# --- stocks (built-in handler) ---------------------------------------------------------------------


def ticker_days(item: Item, data: Data, channel: str, pattern: str) -> tuple[str, pd.Series, str, str]:
    ticker, first, last = grab(pattern, item["question"])
    return ticker, data.between(channel, pd.Timestamp(first), pd.Timestamp(last), prefix=f"{ticker}-"), first, last


@checker
def check_stocks_peak_close_date(item: Item, data: Data) -> list[str]:
    ticker, part, first, last = ticker_days(
        item, data, "close", r"^(\w+)'s daily closing price .*? from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})\.")
    (n,) = grab(r"on the (\d+) trading days", item["question"])
    problems = [] if len(part) == int(n) else [f"{first} to {last} holds {len(part)} trading days, not {n}"]
    return problems + day_of_extreme(item, part, part.max(), f"{ticker} close {first} to {last}")


@checker
def check_stocks_return_pct(item: Item, data: Data) -> list[str]:
    ticker, part, first, last = ticker_days(
        item, data, "adj_close", r"price \(USD\) of (\w+) from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})\.")
    truth = 100 * (part.iloc[-1] / part.iloc[0] - 1)
    return shows(item, 0, part, f"{ticker} adj_close {first} to {last}") + numeric_verdict(item, float(truth))


@checker
def check_stocks_moving_average_low(item: Item, data: Data) -> list[str]:
    ticker, part, first, last = ticker_days(
        item, data, "close", r"series is (\w+)'s daily close .*? from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2});")
    (n,) = grab(r"its (\d+)-day moving average", item["question"])
    ma = part.rolling(int(n)).mean().dropna()
    return (shows(item, 0, part, f"{ticker} close") + shows(item, 1, ma, f"its {n}-day trailing mean", 1e-6)
            + numeric_verdict(item, float(ma.min())))


@checker
def check_stocks_days_above_price(item: Item, data: Data) -> list[str]:
    ticker, part, first, last = ticker_days(
        item, data, "adj_close", r"prices \(USD\) of (\w+) on the \d+ trading days from (\S+) to (\S+)\.")
    (price,) = grab(r"above (\d+(?:\.\d+)?) USD", item["question"])
    return (shows(item, 0, part, f"{ticker} adj_close") +
            numeric_verdict(item, float((part > float(price)).sum()), f" against the printed {price} USD"))


# --- glucose and ECG (built-in handlers) -----------------------------------------------------------


@checker
def check_glucose_readings_above_180(item: Item, data: Data) -> list[str]:
    first, last, n = grab(r"from (\S+ \S+) to (\S+ \S+) \((\d+) readings\)", item["question"])
    (limit,) = grab(r"above (\d+) mg/dL", item["question"])
    part = data.between("glucose_mgdl", pd.Timestamp(first), pd.Timestamp(last) + pd.Timedelta(seconds=59))
    problems = [] if len(part) == int(n) else [f"{first} to {last} holds {len(part)} readings, not {n}"]
    return problems + shows(item, 0, part, "the named readings") + numeric_verdict(item, float((part > int(limit)).sum()))


@checker
def check_glucose_time_of_peak(item: Item, data: Data) -> list[str]:
    day, first, last = grab(r"on (\d{4}-\d{2}-\d{2}), one reading every 5 minutes from (\d\d:\d\d) to (\d\d:\d\d)",
                            item["question"])
    part = data.between("glucose_mgdl", pd.Timestamp(f"{day} {first}"), pd.Timestamp(f"{day} {last}:59"))
    top = part.max()
    by_clock = {t.strftime("%H:%M"): v for t, v in part.items()}
    correct = [by_clock.get(o.strip()) == top for o in item["options"]]
    return shows(item, 0, part, f"glucose {day} {first}-{last}") + verdict(item, correct)


def ecg_between(data: Data, first: str, last: str) -> pd.Series:
    ecg = data.column("ecg_mv")
    times = ecg.index.to_numpy(dtype=float)
    return ecg[(times >= float(first) - 5e-4) & (times <= float(last) + 5e-4)]


@checker
def check_ecg_time_of_max(item: Item, data: Data) -> list[str]:
    first, last = grab(r"from (\d+\.\d+) s to (\d+\.\d+) s", item["question"])
    part = ecg_between(data, first, last)
    times = part.index.to_numpy(dtype=float)
    top = part.max()

    def right(option: str) -> bool:
        near = np.flatnonzero(np.abs(times - number(option)) < 5e-4)
        return len(near) == 1 and part.iloc[int(near[0])] == top

    return shows(item, 0, part, f"ecg {first}-{last} s") + verdict(item, [right(o) for o in item["options"]])


@checker
def check_ecg_range_blocks(item: Item, data: Data) -> list[str]:
    rid, part, first, last = block_window(item, data, "ecg_mv")
    return shows(item, 0, part, f"ecg of {rid}") + numeric_verdict(item, float(part.max() - part.min()))


@checker
def check_ecg_samples_above(item: Item, data: Data) -> list[str]:
    first, last, n = grab(r"from (\d+\.\d+) s to (\d+\.\d+) s \((\d+) samples\)", item["question"])
    (level,) = grab(r"above (-?\d+(?:\.\d+)?) mV", item["question"])
    part = ecg_between(data, first, last)
    problems = [] if len(part) == int(n) else [f"{first}-{last} s holds {len(part)} samples, not {n}"]
    return problems + shows(item, 0, part, "the named samples") + numeric_verdict(
        item, float((part > float(level)).sum()), f" against the printed {level} mV")


# --- running -----------------------------------------------------------------------------------------


def load_entries() -> list[dict[str, Any]]:
    entries = tomllib.loads((CORPUS / "manifest.toml").read_text())["template"]
    return [e for e in entries if e["file"].startswith(FOLDERS)]


def sample(entry: dict[str, Any], seed: int, n: int) -> list[Item]:
    command = [str(Path(sys.executable).with_name("itemsmith")), "sample", "--template", str(CORPUS / entry["file"]),
               "--handler", str(ROOT / entry["handler"]) if entry["handler"].endswith(".py") else entry["handler"],
               "-n", str(n), "--seed", str(seed), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{entry['file']} seed {seed}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def check_item(check: Checker, item: Item, data: Data) -> list[str]:
    try:
        return check(item, data)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return [f"unreadable: {type(exc).__name__}: {exc}"]


def shifted(item: Item) -> Item:
    """The control: the same item keyed on the next option."""
    moved = copy.deepcopy(item)
    moved["answer_index"] = (item["answer_index"] + 1) % len(item["options"])
    return moved


def answer_in_text(item: Item) -> bool:
    """The item's text carries its key, encoded (the `encoded_answer` flaw shows): the key's text in
    hexadecimal (keys of at least 3 characters) or reversed (at least 5), or in the context its letter shifted
    three places as a lone capital letter."""
    context = str(item.get("context") or "")
    text = f"{item['question']} {context}"
    key = item["options"][item["answer_index"]]
    letter = chr(ord("A") + item["answer_index"])
    shifted_letters = {chr(ord(c) - 3) for c in re.findall(r"\b([D-Z])\b", context)}
    return ((len(key) >= 3 and key.encode().hex() in text) or (len(key) >= 5 and key[::-1] in text)
            or letter in shifted_letters)


def run(entries: list[dict[str, Any]], seeds: list[int], n: int) -> list[dict[str, Any]]:
    results, datas = [], {}
    for entry in entries:
        stem = Path(entry.get("base") or entry["file"]).stem
        check = CHECKERS.get(stem)
        if check is None:
            print(f"{entry['file']}: no checker for {stem}", file=sys.stderr)
            continue
        data = datas.setdefault(entry["handler"], Data(entry["handler"]))
        items, wrong, examples, control_caught, in_text = 0, 0, [], 0, 0
        for seed in seeds:
            for item in sample(entry, seed, n):
                items += 1
                problems = check_item(check, item, data)
                wrong += bool(problems)
                if problems and len(examples) < 3:
                    examples.append({"seed": seed, "question": item["question"][:200], "problems": problems})
                control_caught += bool(check_item(check, shifted(item), data))
                in_text += answer_in_text(item)
        row = {"file": entry["file"], "kind": entry["kind"], "class": entry["class"], "items": items, "wrong": wrong,
               "control_items": items, "control_caught": control_caught, "key_in_text": in_text,
               "examples": examples}
        results.append(row)
        print(f"{entry['file']:60s} {entry['class']:26s} items {items:4d}  wrong {wrong:4d}  "
              f"control caught {control_caught:4d}/{items}  key in text {in_text}", flush=True)
        for example in examples[:1]:
            print(f"    e.g. seed {example['seed']}: {example['problems'][0][:220]}")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flawed", action="store_true", help="check the flawed edits with their base's checker")
    parser.add_argument("--only", nargs="*", help="file stems to check")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--json-out", type=Path, default=RESULTS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    kind = "flawed" if args.flawed else "good"
    entries = [e for e in load_entries() if e["kind"] == kind
               and (not args.only or Path(e["file"]).stem in args.only)]
    seeds = list(range(1, args.seeds + 1))
    results = run(entries, seeds, args.items)
    items = sum(r["items"] for r in results)
    wrong = sum(r["wrong"] for r in results)
    caught = sum(r["control_caught"] for r in results)
    print(f"\n{kind}: {len(results)} templates, {items} items, {wrong} with a problem; "
          f"control: {caught} of {items} shifted keys reported wrong")
    if not args.no_write:
        out = args.json_out if not args.flawed else args.json_out.with_name(args.json_out.stem + "_flawed.json")
        commands = [" ".join(sys.argv)]
        if args.only and out.exists():  # a partial run replaces its templates' rows in the last full run
            last = json.loads(out.read_text())
            fresh = {r["file"] for r in results}
            results = sorted([r for r in last["templates"] if r["file"] not in fresh] + results,
                             key=lambda r: r["file"])
            commands = last["commands"] + commands
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"kind": kind, "seeds": seeds, "items_per_seed": args.items,
                                   "commands": commands, "templates": results}, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0 if args.flawed or (wrong == 0 and caught == items) else 1


if __name__ == "__main__":
    sys.exit(main())
