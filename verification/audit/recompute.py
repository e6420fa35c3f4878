"""Recomputing the statistic a question asks for from the series an item shows.

The key of "What was the highest ...", "How many days had more than 5 mm", "On which day was the
change largest", "On which date did ... peak" must be that statistic of a series shown, in the
key's own terms: an amount (a number, rounded as the key is written), a position ("day 17",
"hour 19") or a date/time (read like the options). `recompute(item)` gives the key's kind and the
values every reading of the asked statistic takes (per series shown, on its values, its changes and
percentage changes, and on the difference of two aligned series), or None when the question asks
for nothing recomputable (a count of heartbeats, a lag, a label).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.features import option_value, plain_number, words_besides_numbers
from itemsmith.verification.audit.quantities import normal_text, quantities

__all__ = ["Recomputed", "recompute"]

# statistics the audit recomputes for an amount key; count and share only with a threshold in the question
_AMOUNT = frozenset({"max", "min", "mean", "median", "sum", "range", "change"})
# statistics that have a position or a time: where the max or the min is (a "change" without a max is
# a break, which has no one reading)
_LOCATED = frozenset({"max", "min"})
_POSITION = re.compile(r"^\s*(day|hour|minute|week|month|sample|position|point|reading|trading day|step|index|"
                       r"segment|beat|second)\s+(\d+)\s*$", re.I)
_THRESHOLD = re.compile(r"\b(above|over|exceed\w*|greater than|more than|higher than|at least|below|under|"
                        r"less than|lower than|at most|fewer than|between|within|inside|outside|range)\b", re.I)
# an option that names a thing ("series 2", "candidate 4", "P3", "window 1"), not an amount
_LABEL = re.compile(r"^\s*[a-z][a-z ]*?\s*#?\d+\s*$", re.I)
_APPROXIMATELY = frozenset({"about", "approximately", "around", "roughly", "nearly"})
_FROM_ONE = re.compile(r"\bas (?:day|hour|minute|week|month|sample|position|point|reading|trading day|step|index|"
                       r"segment|beat|second) 1\b|\b1-based\b|\bone-based\b|\bnumbered from 1\b", re.I)
_FROM_ZERO = re.compile(r"\bas (?:day|hour|minute|week|month|sample|position|point|reading|trading day|step|index|"
                        r"segment|beat|second) 0\b|\b0-based\b|\bzero-based\b|\bnumbered from 0\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")
_DATEISH = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}")


@dataclass(frozen=True)
class Recomputed:
    """What the question asks for and the values its readings take, in the key's terms."""

    asked: frozenset[str]
    kind: str  # "amount", "position" or "time"
    key: float
    tolerance: float
    values: list[float]

    @property
    def matched(self) -> bool:
        return any(abs(v - self.key) <= self.tolerance for v in self.values)


def _shown(item: Item) -> list[np.ndarray]:
    return [np.asarray(s.values, dtype=float) for s in item.series if len(s.values) >= 5]


def _named_stretches(item: Item) -> list[tuple[np.ndarray, int]]:
    """The stretch of a series shown between the first and the last of its timestamps the question
    names ("from 2013-04-05 to 2013-04-19"), with its offset in the series."""
    named = _DATEISH.findall(item.question)
    out = []
    for s in item.series:
        if not s.timestamps or len(s.timestamps) != len(s.values) or len(s.values) < 5:
            continue
        at = sorted({i for i, stamp in enumerate(s.timestamps) for date in named if str(stamp).startswith(date)})
        if len(at) >= 2:
            out.append((np.asarray(s.values[at[0]:at[-1] + 1], dtype=float), at[0]))
    return out


def _variants(item: Item) -> list[tuple[np.ndarray, int, int]]:
    """(values, where values[0] is in the series, 1 for changes else 0) for each series shown and
    each stretch of one the question names by its dates, their changes, their percentage changes
    (both also in absolute value), and the difference of two series of the same length."""
    shown = _shown(item)
    out: list[tuple[np.ndarray, int, int]] = []
    for v, start in [(v, 0) for v in shown] + _named_stretches(item):
        out.append((v, start, 0))
        diff = np.diff(v)
        out += [(diff, start, 1), (np.abs(diff), start, 1)]
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = 100.0 * (v[1:] / v[:-1] - 1.0)
        if np.all(np.isfinite(pct)):
            out += [(pct, start, 1), (np.abs(pct), start, 1)]
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            if len(a) == len(b):
                out += [(a - b, 0, 0), (b - a, 0, 0), (np.abs(a - b), 0, 0)]
    return out


def _thresholds(question: str) -> list[float]:
    text = _DATEISH.sub(" ", question)
    return [float(m) for m in _NUMBER.findall(text)]


def _amounts(item: Item, asked: set[str], question: str) -> list[float]:
    values: list[float] = []
    thresholds = _thresholds(question) if _THRESHOLD.search(question) else []
    for v, _, _ in _variants(item):
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
        if asked & {"count", "share"}:
            bounds: list[tuple[float | None, float | None]] = [(t, None) for t in thresholds]
            bounds += [(None, t) for t in thresholds]
            bounds += [(a, b) for a, b in zip(thresholds, thresholds[1:], strict=False) if a < b]
            for low, high in bounds:
                for strict in (True, False):
                    inside = np.ones(len(v), dtype=bool)
                    if low is not None:
                        inside &= (v > low) if strict else (v >= low)
                    if high is not None:
                        inside &= (v < high) if strict else (v <= high)
                    count = float(inside.sum())
                    values += [count, 100.0 * count / len(v), count / len(v)]
    return values


def _bases(question: str) -> tuple[int, ...]:
    """How the question counts positions: from 1 ("counting the first day as day 1"), from 0, or unsaid."""
    if _FROM_ONE.search(question):
        return (1,)
    if _FROM_ZERO.search(question):
        return (0,)
    return (0, 1)


def _positions(item: Item, asked: set[str], bases: tuple[int, ...]) -> list[int]:
    """Where the asked statistic lies, counted from each of `bases`: a value at index i is at i + base;
    a change at index i of the changes lies between the values at i and i + 1 (either counts); in a
    named stretch, counted in the series or in the stretch."""
    found: set[int] = set()
    for v, start, shift in _variants(item):
        targets = []
        if "max" in asked:
            targets.append(v.max())
        if "min" in asked:
            targets.append(v.min())
        for target in targets:
            for i in np.flatnonzero(np.isclose(v, target, rtol=1e-12, atol=1e-12)):
                for base in bases:
                    found |= {int(i) + base + at + step for at in {0, start} for step in {0, shift}}
    return sorted(found)


def _times(item: Item, asked: set[str]) -> list[float]:
    stamps = next((s.timestamps for s in item.series if s.timestamps and len(s.values) >= 5), None)
    if stamps is None:
        return []
    read = [option_value(t) for t in stamps]
    if any(r is None for r in read):
        return []
    return [read[p] for p in _positions(item, asked, (0,)) if 0 <= p < len(read)]  # type: ignore[misc]


def _names(option: str, names: list[str]) -> bool:
    """Whether the option is (a word of) a series' name: "2014" of "precipitation 2014" labels a series."""
    word = re.compile(rf"(?<![\w.]){re.escape(normal_text(option))}(?![\w.])")
    return any(word.search(name) for name in names)


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
        return Recomputed(frozenset(located), "position", float(position[2]), 0.0,
                          [float(p) for p in _positions(item, located, _bases(item.question))])
    if (number := plain_number(answer)) is None:
        if (when := option_value(answer)) is None or not asked & _LOCATED:
            return None
        return Recomputed(frozenset(asked & _LOCATED), "time", when, 1e-6, _times(item, asked & _LOCATED))
    names = [normal_text(s.name) for s in item.series]
    if any(plain_number(o) is None or _LABEL.match(o) or _names(o, names) for o in item.options):
        return None
    # a key written in words other than the series' unit ("72 beats per minute" over an ECG in mV) is
    # not a statistic of the values shown
    unit_words = {w for s in item.series for w in words_besides_numbers(f"{s.unit or ''} {s.name}")}
    in_unit = not set(words_besides_numbers(answer)) - unit_words - _APPROXIMATELY
    recomputable = set(asked & _AMOUNT) if in_unit else set()
    if asked & {"count", "share"} and _THRESHOLD.search(question) and _thresholds(question):
        recomputable |= asked & {"count", "share"}
    if not recomputable:
        return None
    key, decimals = number
    return Recomputed(frozenset(recomputable), "amount", key, 0.5 * 10.0 ** -decimals + 1e-9,
                      _amounts(item, recomputable, question))
