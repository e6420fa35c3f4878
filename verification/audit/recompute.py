"""Recomputing the statistic a question asks for from the series an item shows.

The key of "What was the highest ...", "How many days had more than 5 mm", "On which day was the
change largest", "On which date did ... peak" must be that statistic of a series shown, in the
key's own terms: an amount (a number, rounded as the key is written), a position ("day 17",
"hour 19") or a date/time (read like the options). `recompute(item)` gives the key's kind and every
reading of the asked statistic, or None when the question asks for nothing recomputable (a count
of heartbeats, a lag, a label).

A reading is what the question's words ask for, with the numbers the question prints: per series
shown (and per stretch of one the question names by its dates, or as its first or last N days),
on its values; on its changes and percentage changes only when the question speaks of changes; on
the difference of two series only when it asks for one; counts against the thresholds as printed
("above 0.819%" counts values above 0.819, never above an unrounded 0.819273). The reading that
matches the key also decides ambiguity (`Recomputed.also_right`): another option that satisfies
that same reading (a maximum reached on two days that are both options; a value both options
round to) makes the item ambiguous.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.dates import dates_in, read_when
from itemsmith.verification.audit.features import option_value, plain_number, words_besides_numbers
from itemsmith.verification.audit.quantities import normal_text, quantities

__all__ = ["APPROXIMATELY", "Recomputed", "data_decimals", "label_ties", "recompute"]

# statistics the audit recomputes for an amount key; count and share only with a threshold in the question
_AMOUNT = frozenset({"max", "min", "mean", "median", "sum", "range", "change"})
# statistics that have a position or a time: where the max or the min is (a "change" without a max is
# a break, which has no one reading)
_LOCATED = frozenset({"max", "min"})
_UNITS = (r"day|hour|minute|week|month|sample|position|point|reading|trading day|step|index|segment|beat|second|"
          r"value|observation|session")
_POSITION = re.compile(r"^\s*(day|hour|minute|week|month|sample|position|point|reading|trading day|step|index|"
                       r"segment|beat|second)\s+(\d+)\s*$", re.I)
_THRESHOLD = re.compile(r"\b(above|over|exceed\w*|greater than|more than|higher than|at least|below|under|"
                        r"less than|lower than|at most|fewer than|between|within|inside|outside|range)\b|[<>≤≥]", re.I)
_NUM = r"[-−]?\d[\d,]*(?:\.\d+)?"
_UPPER_WORDS = r"below|under|less than|lower than|fewer than|at most|no more than|not more than|not above|<=|<|≤"
_LOWER_WORDS = (r"above|over|exceed(?:s|ed|ing)?|greater than|more than|higher than|at least|no less than|"
                r"not less than|not below|>=|>|≥")
_BOUND = re.compile(rf"(?P<dir>{_UPPER_WORDS}|{_LOWER_WORDS})\s*(?:or equal to\s*|\(?inclusive\)?\s*)?"
                    rf"(?P<n>{_NUM})\s*(?P<pct>%|percent\b)?", re.I)
_BOUND_AFTER = re.compile(rf"(?P<n>{_NUM})\s*(?P<pct>%|percent\b)?\s*(?:[^\s\d]+\s+){{0,2}}?"
                          r"(?P<dir>or more|or above|or higher|or greater|and above|and over|and up|or less|or below|"
                          r"or lower|or fewer|and below|and under)\b", re.I)
_BETWEEN = re.compile(rf"\bbetween\s+(?P<a>{_NUM})\s*(?P<pa>%)?\s*(?:[^\s\d]+\s+){{0,2}}?(?:and|to)\s+"
                      rf"(?P<b>{_NUM})\s*(?P<pb>%|percent\b)?", re.I)
# an option that names a thing ("series 2", "candidate 4", "P3", "window 1"), not an amount
_LABEL = re.compile(r"^\s*[a-z][a-z ]*?\s*#?\d+\s*$", re.I)
APPROXIMATELY = re.compile(r"\b(?:about|approximately|approx\.?|around|roughly|nearly|circa|close to|"
                           r"to the nearest)\b|~|≈", re.I)
_APPROXIMATE_WORDS = frozenset({"about", "approximately", "around", "roughly", "nearly"})
_FROM_ONE = re.compile(rf"\bas (?:{_UNITS}) 1\b|\b1-based\b|\bone-based\b|\bnumbered from 1\b", re.I)
_FROM_ZERO = re.compile(rf"\bas (?:{_UNITS}) 0\b|\b0-based\b|\bzero-based\b|\bnumbered from 0\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")
_DATEISH = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}")
# words that ask about the steps between values: a count or an extreme over changes, not over values
_CHANGES = re.compile(r"\b(?:chang\w*|differences?|increas\w*|decreas\w*|ris(?:e|es|ing)|rose|fall\w*|fell|drops?|"
                      r"dropp\w*|jumps?|jumped|moves?|moved|swings?|returns?|gain\w*|loss\w*|los(?:e|t)|grew|growth|"
                      r"step|steps|day[- ]to[- ]day|day[- ]over[- ]day|delta|went (?:up|down))\b", re.I)
_RELATIVE = re.compile(r"%|\bper ?cent\w*\b|\breturns?\b|\brelative\b|\bgrowth\b", re.I)
_BETWEEN_SERIES = re.compile(r"\b(?:difference|gap|spread|margin) (?:between|of)\b|\bminus\b|\bby how much\b|"
                             r"\bexceed(?:s|ed)? (?:the|their|its)\b|\bhow much (?:higher|"
                             r"lower|more|less|warmer|colder|greater|larger|smaller)\b|\b(?:higher|lower|warmer|"
                             r"colder|greater|larger|smaller|more|less) than\b", re.I)
# where a change is dated: on the later day ("the rise from the previous day"), on the earlier one ("the
# drop to the next day"), or, unsaid, either
_ONTO = re.compile(r"\b(?:from|since|over|compared (?:with|to)|than|after|relative to) (?:the )?(?:previous|prior|"
                   r"preceding|last|day before|hour before|week before|month before|one before)\b", re.I)
_TO_NEXT = re.compile(r"\b(?:to|into|before|until) (?:the )?(?:next|following|day after|hour after|one after)\b", re.I)
_DAY_MINUTES = 1440  # option_value reads a clock time as minutes, a date as its ordinal (plus the day's fraction)
# "in which month were there the most passengers": the period that holds the most
_THE_MOST = {"max": re.compile(r"\bthe most\b", re.I), "min": re.compile(r"\bthe (?:least|fewest)\b", re.I)}
# the fields a calendar period can name, as pandas reads them off a timestamp
_CALENDAR_FIELDS = ("year", "quarter", "month", "day", "hour", "weekday")
_EDGE_STRETCH = re.compile(rf"\b(?P<end>first|last|final|past|opening|closing|most recent|latest|earliest)\s+"
                           rf"(?P<n>\d+)\s+(?:{_UNITS}|days|hours|values|readings|points|weeks|months|trading days|"
                           rf"observations|samples|sessions)", re.I)


@dataclass(frozen=True)
class Recomputed:
    """What the question asks for and the values each of its readings takes, in the key's terms: a
    reading is one value (an amount) or the positions or times where a maximum or minimum lies (ties:
    several)."""

    asked: frozenset[str]
    kind: str  # "amount", "position" or "time"
    key: float
    tolerance: float
    readings: tuple[tuple[float, ...], ...]
    key_index: int = 0
    options: tuple[tuple[float, float] | None, ...] = ()  # each option's (value, how close it must be)
    labels: tuple[str, ...] = ()  # a "calendar" value v is the period labels[v] ("July", "1949 Q3", "Monday")

    def read(self, value: float) -> str:
        """A reading as the key would write it: a clock time (minutes) as HH:MM, a date (a day's
        ordinal plus its fraction) as a date, a calendar period by its label."""
        if self.kind == "calendar":
            return self.labels[int(value)]
        if self.kind != "time" or value < 0:
            return f"{value:g}"
        if value < _DAY_MINUTES:
            return f"{int(value) // 60:02d}:{int(value) % 60:02d}"
        day = date.fromordinal(int(value))
        minutes = round((value - int(value)) * _DAY_MINUTES)
        return f"{day:%Y-%m-%d}" + (f" {minutes // 60:02d}:{minutes % 60:02d}" if minutes else "")

    @property
    def values(self) -> list[float]:
        return sorted({v for reading in self.readings for v in reading})

    def _satisfies(self, reading: tuple[float, ...], value: float, tolerance: float) -> bool:
        return any(abs(v - value) <= tolerance for v in reading)

    @property
    def matched(self) -> bool:
        return any(self._satisfies(r, self.key, self.tolerance) for r in self.readings)

    def also_right(self) -> list[int]:
        """The other options that every reading matching the key also satisfies: the item has two
        right answers (a maximum on two days that are both options, a value two options round to)."""
        matching = [r for r in self.readings if self._satisfies(r, self.key, self.tolerance)]
        if not matching:
            return []
        return [i for i, option in enumerate(self.options) if i != self.key_index and option is not None
                and all(self._satisfies(r, option[0], option[1]) for r in matching)]


def _shown(item: Item) -> list[np.ndarray]:
    return [np.asarray(s.values, dtype=float) for s in item.series if len(s.values) >= 5]


def _named_stretches(item: Item) -> list[tuple[np.ndarray, int]]:
    """The stretch of a series shown between the first and the last of its timestamps the question
    names ("from 2013-04-05 to 2013-04-19"), and its first or last N values where the question says
    so ("over the last 7 days"), with the offset in the series."""
    named = _DATEISH.findall(item.question)
    edges = [(m["end"].lower(), int(m["n"])) for m in _EDGE_STRETCH.finditer(item.question)]
    out = []
    for s in item.series:
        if len(s.values) < 5:
            continue
        values = np.asarray(s.values, dtype=float)
        for end, n in edges:
            if 1 <= n < len(values):
                start = 0 if end in ("first", "opening", "earliest") else len(values) - n
                out.append((values[start:start + n], start))
        if not s.timestamps or len(s.timestamps) != len(s.values):
            continue
        at = sorted({i for i, stamp in enumerate(s.timestamps) for date in named if str(stamp).startswith(date)})
        if len(at) >= 2:
            out.append((values[at[0]:at[-1] + 1], at[0]))
    return out


def _variants(item: Item, question: str) -> list[tuple[np.ndarray, int, int]]:
    """(values, where values[0] is in the series, 1 for changes else 0) for each series shown and
    each stretch of one the question names; their changes (also in absolute value) when the question
    speaks of changes, their percentage changes when it speaks of relative ones; the difference of
    two series of the same length when it asks how they differ."""
    shown = _shown(item)
    changes, relative = bool(_CHANGES.search(question)), bool(_RELATIVE.search(question))
    out: list[tuple[np.ndarray, int, int]] = []
    for v, start in [(v, 0) for v in shown] + _named_stretches(item):
        out.append((v, start, 0))
        if changes:
            diff = np.diff(v)
            out += [(diff, start, 1), (np.abs(diff), start, 1)]
            if relative:
                with np.errstate(divide="ignore", invalid="ignore"):
                    pct = 100.0 * (v[1:] / v[:-1] - 1.0)
                if np.all(np.isfinite(pct)):
                    out += [(pct, start, 1), (np.abs(pct), start, 1)]
    if len(shown) > 1 and _BETWEEN_SERIES.search(question):
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                if len(a) == len(b):
                    out += [(a - b, 0, 0), (b - a, 0, 0), (np.abs(a - b), 0, 0)]
    return out


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def _bounds(question: str, percent_unit: bool, fallback: bool = True) -> list[tuple[float | None, float | None]]:
    """The (low, high) bounds a count or share question prints ("more than 5 mm", "between 3 and 7",
    "10 or more"), each as printed and, where a % follows it over a series not in %, as a fraction."""
    text = _DATEISH.sub(" ", question)

    def readings(number: str, pct: str | None) -> list[float]:
        value = _number(number)
        return [value, value / 100.0] if pct and not percent_unit else [value]

    bounds: list[tuple[float | None, float | None]] = []
    for m in _BETWEEN.finditer(text):
        pct = m["pb"] or m["pa"]
        for a, b in zip(readings(m["a"], pct), readings(m["b"], pct), strict=True):
            bounds.append((min(a, b), max(a, b)))
    covered = [m.span() for m in _BETWEEN.finditer(text)]
    for pattern in (_BOUND, _BOUND_AFTER):
        for m in pattern.finditer(text):
            if any(a <= m.start("n") < b for a, b in covered):
                continue
            upper = re.fullmatch(_UPPER_WORDS, m["dir"], re.I) or m["dir"].lower() in (
                "or less", "or below", "or lower", "or fewer", "and below", "and under")
            for value in readings(m["n"], m["pct"]):
                bounds.append((None, value) if upper else (value, None))
    if bounds or not fallback:
        return bounds
    numbers = [_number(n) for n in _NUMBER.findall(text)]  # no comparison phrase it reads: any printed number
    return [(t, None) for t in numbers] + [(None, t) for t in numbers] + \
        [(a, b) for a, b in zip(numbers, numbers[1:], strict=False) if a < b]


def _within(v: np.ndarray, bounds: list[tuple[float | None, float | None]]) -> list[np.ndarray]:
    """Which values meet each printed bound, read strictly ("above 5": > 5) and not (>= 5)."""
    out = []
    for low, high in bounds:
        for strict in (True, False):
            inside = np.ones(len(v), dtype=bool)
            if low is not None:
                inside &= (v > low) if strict else (v >= low)
            if high is not None:
                inside &= (v < high) if strict else (v <= high)
            out.append(inside)
    return out


def _amounts(item: Item, asked: set[str], question: str) -> list[tuple[float, ...]]:
    values: list[float] = []
    percent_unit = any((s.unit or "").strip() in ("%", "percent") for s in item.series)
    bounds = _bounds(question, percent_unit) if asked & {"count", "share"} else []
    for v, _, _ in _variants(item, question):
        if "max" in asked:
            values.append(float(v.max()))
        if "min" in asked:
            values.append(float(v.min()))
        if "mean" in asked:
            values.append(float(v.mean()))
        if "median" in asked:
            values.append(float(np.median(v)))
        if "sum" in asked:
            values.append(float(v.sum()))
        if asked & {"range", "change"}:
            values += [float(v.max() - v.min()), float(v[-1] - v[0]), float(v[0] - v[-1])]
            if v[0] != 0:
                values.append(float(100.0 * (v[-1] / v[0] - 1.0)))
        for inside in _within(v, bounds):
            count = float(inside.sum())
            if "count" in asked:
                values.append(count)
            if "share" in asked:
                values += [100.0 * count / len(v), count / len(v)]
    values += _between_series(item, asked, question)
    return [(v,) for v in dict.fromkeys(values)]


_AGGREGATES: dict[str, Callable[[np.ndarray], float]] = {
    "mean": lambda v: float(v.mean()), "sum": lambda v: float(v.sum()), "median": lambda v: float(np.median(v)),
    "max": lambda v: float(v.max()), "min": lambda v: float(v.min())}


def _between_series(item: Item, asked: set[str], question: str) -> list[float]:
    """How one series' statistic differs from another's, when the question speaks of a change or a
    difference over two or more series shown ("by how much did the mean change from 2013 to 2015",
    "by what percentage did the total change"): either way round, as a difference, in absolute value
    and as a percentage of the first. Series of any lengths (a year of 53 weeks against one of 52)."""
    shown = _shown(item)
    if len(shown) < 2 or not (_CHANGES.search(question) or _BETWEEN_SERIES.search(question)):
        return []
    out: list[float] = []
    for name in sorted(asked & _AGGREGATES.keys() or ({"mean", "sum"} if "change" in asked else set())):
        stats = [_AGGREGATES[name](v) for v in shown]
        for i, a in enumerate(stats):
            for j, b in enumerate(stats):
                if i != j:
                    out += [b - a, abs(b - a)] + ([100.0 * (b / a - 1.0)] if a else [])
    return out


def _bases(question: str) -> tuple[int, ...]:
    """How the question counts positions: from 1 ("counting the first day as day 1"), from 0, or unsaid."""
    if _FROM_ONE.search(question):
        return (1,)
    if _FROM_ZERO.search(question):
        return (0,)
    return (0, 1)


def _positions(item: Item, asked: set[str], bases: tuple[int, ...], question: str) -> list[tuple[int, ...]]:
    """Where the asked statistic lies, one reading per way of reading the question: a value at index i
    is at i + base; a change at index i of the changes lies between the values at i and i + 1: at the
    later one when the question dates it so ("the rise from the previous day"), the earlier one when
    it says "to the next day", either when it does not say; in a named stretch, counted in the series
    or in the stretch. Ties: several positions."""
    found: set[tuple[int, ...]] = set()
    onto, to_next = bool(_ONTO.search(question)), bool(_TO_NEXT.search(question))
    for v, start, shift in _variants(item, question):
        steps = {shift} if onto and not to_next else {0} if to_next and not onto else {0, shift}
        targets = []
        if "max" in asked:
            targets.append(v.max())
        if "min" in asked:
            targets.append(v.min())
        for target in targets:
            where = np.flatnonzero(np.isclose(v, target, rtol=1e-12, atol=1e-12))
            for base in bases:
                for at in {0, start}:
                    for step in steps:
                        found.add(tuple(int(i) + base + at + step for i in where))
    return sorted(found)


def _read_stamps(stamps: list[Any], clock: bool) -> list[float] | None:
    """Timestamps read like time options (None: one is unreadable); a clock time of dated readings for
    "at what time"."""
    read = [v for t in stamps if (v := option_value(str(t))) is not None]
    if len(read) != len(stamps):
        return None
    if clock and all(v >= _DAY_MINUTES for v in read):
        read = [round((v - int(v)) * _DAY_MINUTES) for v in read]
    return read


def _times(item: Item, asked: set[str], question: str, *, clock: bool = False) -> list[tuple[float, ...]]:
    stamps = next((s.timestamps for s in item.series if s.timestamps and len(s.values) >= 5), None)
    read = None if stamps is None else _read_stamps(list(stamps), clock)
    if read is None:
        return []
    out = []
    for reading in _positions(item, asked, (0,), question):
        times = tuple(read[p] for p in reading if 0 <= p < len(read))
        if times:
            out.append(times)
    return out


def _period_fields(when: object) -> tuple[str, ...]:
    return tuple(f for f in _CALENDAR_FIELDS if getattr(when, f, None) is not None)


def _calendar(item: Item, question: str) -> Recomputed | None:
    """A key that names a calendar period and nothing finer than the question needs ("July", "1949 Q3",
    "Monday", "March 2013"), read like the options: the periods of the timestamps where the asked maximum
    or minimum lies, in each series shown, and, where a period holds several readings, the period whose
    mean, total or extreme is the maximum or minimum. What is asked is read from the asking sentence
    alone ("the monthly number of passengers ... In which month were there the most?" asks for no count).
    Not recomputable: options written with other fields, a period coarser than the readings under a
    question about changes."""
    asking = _asking_sentence(question)
    asked = quantities(normal_text(asking))
    located = asked & _LOCATED | {q for q, word in _THE_MOST.items() if word.search(asking)}
    if not located or asked & {"count", "share", "range", "spread", "trend", "correlation", "period"}:
        return None
    key = read_when(item.answer)
    fields = _period_fields(key[0]) if key else ()
    if not fields:
        return None
    chosen = []
    for option in item.options:
        same = [w for w in read_when(option) if _period_fields(w) == fields]
        if not same:
            return None
        chosen.append(tuple(getattr(same[0], f) for f in fields))
    labels: dict[tuple[int, ...], str] = dict(zip(chosen, item.options, strict=True))
    per_series: list[tuple[np.ndarray, list[tuple[int, ...]]]] = []
    for s in item.series:
        if len(s.values) < 5 or not s.timestamps or len(s.timestamps) != len(s.values):
            continue
        stamps = pd.to_datetime(pd.Series([str(t) for t in s.timestamps]), errors="coerce", format="mixed")
        if stamps.isna().any():
            return None
        periods = [tuple(int(getattr(t, "dayofweek" if f == "weekday" else f)) for f in fields) for t in stamps]
        for period in periods:
            labels.setdefault(period, _period_label(fields, period))
        per_series.append((np.asarray(s.values, dtype=float), periods))
    if not per_series:
        return None
    codes = {period: i for i, period in enumerate(labels)}
    readings: set[tuple[float, ...]] = set()
    changes = bool(_CHANGES.search(question))
    for values, periods in per_series:
        coarser = len(set(periods)) < len(periods)
        if coarser and changes:
            return None
        variants = [(values, periods)]
        if changes:
            steps = np.diff(values)  # a change dated on its later or its earlier period
            variants += [(steps, periods[1:]), (steps, periods[:-1])]
        if coarser:
            frame = pd.DataFrame({"v": values, "p": periods})
            grouped = frame.groupby("p")["v"]
            for aggregate in (grouped.mean(), grouped.sum(), grouped.max(), grouped.min()):
                variants.append((aggregate.to_numpy(dtype=float), list(aggregate.index)))
        for v, p in variants:
            for target in [v.max()] * ("max" in located) + [v.min()] * ("min" in located):
                where = np.flatnonzero(np.isclose(v, target, rtol=1e-12, atol=1e-12))
                readings.add(tuple(sorted({float(codes[p[i]]) for i in where})))
    options = tuple((float(codes[period]), 0.0) for period in chosen)
    return Recomputed(frozenset(located), "calendar", options[item.answer_index][0], 0.0, tuple(sorted(readings)),
                      item.answer_index, options, tuple(labels.values()))


def _period_label(fields: tuple[str, ...], period: tuple[int, ...]) -> str:
    write: dict[str, Callable[[int], str]] = {"year": str, "quarter": lambda q: f"Q{q}", "month": lambda m: calendar.month_name[m], "day": str,
             "hour": lambda h: f"{h:02d}:00", "weekday": lambda d: calendar.day_name[d]}
    named = dict(zip(fields, period, strict=True))
    return " ".join(write[f](named[f]) for f in ("weekday", "month", "day", "quarter", "year", "hour") if f in named)


# a question about when a condition first or last held, or held in a run, asks for one time among those that meet it
_ORDERED = re.compile(r"\b(?:first|last|earliest|latest|final|initial|begin\w*|start\w*|end\w*|until|since|after|"
                      r"before|consecutive|longest|streak|in a row|again)\b", re.I)


def _meeting(item: Item, question: str, clock: bool) -> list[tuple[float, ...]]:
    """For "on which of these dates was the maximum above 22 °C?": per series shown and per reading of
    the bound its asking sentence prints (strict or not), the times whose value meets it."""
    asking = _asking_sentence(question)
    if _ORDERED.search(asking):
        return []
    percent_unit = any((s.unit or "").strip() in ("%", "percent") for s in item.series)
    bounds = _bounds(asking, percent_unit, fallback=False)
    out = []
    for s in item.series:
        if not bounds or len(s.values) < 5 or not s.timestamps or len(s.timestamps) != len(s.values):
            continue
        if (read := _read_stamps(list(s.timestamps), clock)) is None:
            continue
        v = np.asarray(s.values, dtype=float)
        out += [tuple(read[i] for i in np.flatnonzero(inside)) for inside in _within(v, bounds) if inside.any()]
    return sorted(set(out))


def _names(option: str, names: list[str]) -> bool:
    """Whether the option is (a word of) a series' name: "2014" of "precipitation 2014" labels a series."""
    word = re.compile(rf"(?<![\w.]){re.escape(normal_text(option))}(?![\w.])")
    return any(word.search(name) for name in names)


_INTERVAL = re.compile(rf"^\s*(?:between |from )?(?P<a>{_NUM})\s*(?P<u1>[^\d\s\-–—][^\d]*?)?\s*(?:-|–|—|to|and)\s*"
                       rf"(?P<b>{_NUM})\s*(?P<u2>[^\d]*)$", re.I)


def _interval(option: str) -> tuple[float, float] | None:
    """(low, high) of an option that is a range of amounts ("10-20 mm", "between 3 and 5")."""
    if read_when(option) or dates_in(option) or (match := _INTERVAL.match(option)) is None:
        return None
    low, high = _number(match["a"]), _number(match["b"])
    return (low, high) if low < high else None


def _option_amounts(item: Item) -> tuple[tuple[float, float] | None, ...]:
    out = []
    for option in item.options:
        number = plain_number(option)
        out.append(None if number is None else (number[0], 0.5 * 10.0 ** -number[1] + 1e-9))
    return tuple(out)


def recompute(item: Item) -> Recomputed | None:
    """The asked statistic's readings on the series shown, in the key's terms (None: not recomputable)."""
    if item.kind is not ItemKind.mc or not _shown(item):
        return None
    question = item.question
    for name in {s.name for s in item.series} - {""}:  # `temp_max` names a channel, not a max
        question = re.sub(rf"\b{re.escape(name)}\b", " ", question)
    asked = quantities(normal_text(question))
    answer = item.answer
    if (position := _POSITION.match(answer)) and all(_POSITION.match(o) for o in item.options):
        located = asked & _LOCATED
        if not located:
            return None
        options = tuple((float(m[2]), 0.0) if (m := _POSITION.match(o)) else None for o in item.options)
        return Recomputed(frozenset(located), "position", float(position[2]), 0.0,
                          tuple(tuple(float(p) for p in r) for r in _positions(item, located, _bases(item.question),
                                                                                   question)),
                          item.answer_index, options)
    intervals = [_interval(o) for o in item.options]
    if all(intervals) and asked & _AMOUNT:  # "in which range does the total lie?": "10-20 mm", "15-25 mm"
        low, high = intervals[item.answer_index]  # type: ignore[misc]
        # another range holds the value only strictly inside it: "10-20" and "20-30" share their boundary
        options = tuple(((a + b) / 2, (b - a) / 2 * (1 - 1e-9)) for a, b in intervals)  # type: ignore[misc]
        return Recomputed(frozenset(asked & _AMOUNT), "amount", (low + high) / 2, (high - low) / 2 + 1e-9,
                          tuple(_amounts(item, set(asked & _AMOUNT), question)), item.answer_index, options)
    coarse = [w for w in read_when(answer) if w.day is None and w.hour is None and _period_fields(w) != ("year",)]
    if coarse and (period := _calendar(item, question)) is not None:  # "July", "July 1949", "1949 Q3", "Monday"
        return period
    if (number := plain_number(answer)) is None:
        if (when := option_value(answer)) is None:
            return None
        options = tuple((v, 1e-6) if (v := option_value(o)) is not None else None for o in item.options)
        if meeting := _meeting(item, question, when < _DAY_MINUTES):
            return Recomputed(frozenset({"time meeting the stated bound"}), "time", when, 1e-6, tuple(meeting),
                              item.answer_index, options)
        if not asked & _LOCATED:
            return None
        return Recomputed(frozenset(asked & _LOCATED), "time", when, 1e-6,
                          tuple(_times(item, asked & _LOCATED, question, clock=when < _DAY_MINUTES)),
                          item.answer_index, options)
    names = [normal_text(s.name) for s in item.series]
    if any(plain_number(o) is None or _LABEL.match(o) or _names(o, names) for o in item.options):
        return None
    # a key written in words other than the series' unit ("72 beats per minute" over an ECG in mV) is
    # not a statistic of the values shown
    unit_words = {w for s in item.series for w in words_besides_numbers(f"{s.unit or ''} {s.name}")}
    in_unit = not set(words_besides_numbers(answer)) - unit_words - _APPROXIMATE_WORDS
    recomputable = set(asked & _AMOUNT) if in_unit else set()
    if asked & {"count", "share"} and _THRESHOLD.search(question) and _NUMBER.search(_DATEISH.sub(" ", question)):
        recomputable |= asked & {"count", "share"}
    if not recomputable:
        return None
    key, decimals = number
    return Recomputed(frozenset(recomputable), "amount", key, 0.5 * 10.0 ** -decimals + 1e-9,
                      tuple(_amounts(item, recomputable, question)), item.answer_index, _option_amounts(item))


def data_decimals(item: Item) -> int | None:
    """The decimals the series shown are written with (the most any channel needs; None: more than 6)."""
    most = 0
    for s in item.series:
        values = np.asarray(s.values, dtype=float)
        for d in range(7):
            scaled = values * 10.0 ** d
            if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
                most = max(most, d)
                break
        else:
            return None
    return most


_MOST = re.compile(r"\b(?:most|highest|largest|greatest|biggest|more|higher|larger|greater|bigger|maximum|wettest|"
                   r"warmest|hottest|windiest|strongest|sunniest|best)\b", re.I)
_LEAST = re.compile(r"\b(?:fewest|least|lowest|smallest|fewer|less|lower|smaller|minimum|driest|coldest|coolest|"
                    r"calmest|weakest|worst)\b", re.I)
_COUNTS_THINGS = re.compile(r"\b(?:most|fewest|more|fewer|least) (?:\w+ )?(?:days|hours|readings|times|values|weeks|"
                            r"months|minutes|observations|sessions|samples)\b|\bhow many\b|\bnumber of\b", re.I)


def _asking_sentence(question: str) -> str:
    """The sentence that asks (the one ending in "?", else the last)."""
    sentences = [p.strip() for p in re.split(r"(?<=[.!?])\s+", question) if p.strip()]
    asking = [p for p in sentences if p.endswith("?")]
    return (asking or sentences or [""])[-1]


def label_ties(item: Item) -> list[int]:
    """For "which series had the most / the highest ..." over options that name the channels shown:
    the other options whose channel ties the key's on every reading of the statistic the question
    asks for that makes the key's channel the extreme (two weeks with the same count of rainy days).
    Empty where the options name no channels, the question names no extreme or no statistic, or the
    key's channel is the extreme of no reading (another check's business)."""
    if item.kind is not ItemKind.mc or len(item.series) < 2:
        return []
    names = [normal_text(s.name) for s in item.series]
    if any(names.count(normal_text(o)) != 1 for o in item.options):
        return []
    channels = [names.index(normal_text(o)) for o in item.options]
    asking = _asking_sentence(item.question)  # "which ... the most ...?", not "... more frequent than ..." before it
    most, least = bool(_MOST.search(asking)), bool(_LEAST.search(asking))
    if most == least:
        return []
    question = item.question
    for name in set(names) - {""}:
        question = re.sub(rf"\b{re.escape(name)}\b", " ", normal_text(question))
    asked = quantities(normal_text(question))
    values = [np.asarray(item.series[c].values, dtype=float) for c in channels]
    statistics: list[list[float]] = []
    if asked & {"count", "share"} or _COUNTS_THINGS.search(item.question):
        percent_unit = any((s.unit or "").strip() in ("%", "percent") for s in item.series)
        for low, high in _bounds(item.question, percent_unit, fallback=False):
            for strict in (True, False):
                def count(v: np.ndarray, low: float | None = low, high: float | None = high,
                          strict: bool = strict) -> float:
                    inside = np.ones(len(v), dtype=bool)
                    if low is not None:
                        inside &= (v > low) if strict else (v >= low)
                    if high is not None:
                        inside &= (v < high) if strict else (v <= high)
                    return float(inside.sum())
                statistics.append([count(v) for v in values])
    simple: dict[str, Callable[[np.ndarray], Any]] = {"mean": np.mean, "sum": np.sum, "median": np.median,
                                                      "max": np.max, "min": np.min, "range": np.ptp}
    for name in sorted(asked & simple.keys()):
        statistics.append([float(simple[name](v)) for v in values])
    if "change" in asked:
        statistics.append([float(v[-1] - v[0]) for v in values])
        statistics += [[float(100 * (v[-1] / v[0] - 1)) if v[0] else float("nan") for v in values]]
    key = item.answer_index
    others: set[int] | None = None
    for stat in statistics:
        stat_array = np.asarray(stat)
        if np.isnan(stat_array).any() or np.allclose(stat_array, stat_array[0], rtol=1e-9, atol=1e-12):
            continue  # a statistic every channel shares tells nothing about the question
        extreme = stat_array.max() if most else stat_array.min()
        tied = set(np.flatnonzero(np.isclose(stat_array, extreme, rtol=1e-9, atol=1e-12)).tolist())
        if key in tied:
            others = (tied - {key}) if others is None else others & (tied - {key})
    return sorted(others or ())
