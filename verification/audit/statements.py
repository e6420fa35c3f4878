"""True/false statements read and recomputed from the series shown.

A statement about the data shown ("on at least one of these days the minimum temperature was below
2.3 °C", "over these quarters the mean change of consumption was larger than the mean change of
income") is true or false of those series, whatever the template computed. `statement_truths` gives
the truth under every reading of it (each series it may be about, each statistic word it uses), or
None where it does not read the statement: a property ("is seasonal"), a count of days or a share
of them ("on at least 4 days", "on more than 50 % of the days"), a stretch of the days shown ("in the
last 3 days"), two negations, a threshold without a statistic or a quantifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.quantities import STATISTICS, normal_text, quantities

__all__ = ["statement_truths"]

_CLAIM = re.compile(r"\btrue or false\b\s*[:?.\-]?\s*", re.I)
_EXISTS = re.compile(r"\b(?:at least one|any|some|one or more)\b")
_FORALL = re.compile(r"\b(?:every|all|each)\b")
_NEGATION = re.compile(r"\b(?:not|never|no|none)\b|n't\b")
_BELOW = r"below|beneath|under|less than|lower than|smaller than|colder than|cooler than|<=|<|≤"
_ABOVE = r"above|over|more than|greater than|higher than|larger than|warmer than|exceeded|exceeds|exceed|>=|>|≥"
_NUMBER = r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"  # "1,500" is fifteen hundred
_THRESHOLD = re.compile(rf"(?:\b|(?=[<>≤≥]))(?P<op>{_BELOW}|{_ABOVE})\s+(?P<n>{_NUMBER})(?P<after>\s*\w*)")
_COMPARED = re.compile(rf"(?:\b|(?=[<>≤≥]))(?P<op>{_BELOW}|{_ABOVE})(?:\b|(?<=[<>=≤≥]))")
_UNITS = r"(?:day|hour|week|month|quarter|year|time|reading|value|point|sample)s?\b"
_COUNTED = re.compile(rf"^\s*{_UNITS}")
# "on at least 4 days", "in the last 3 days", "on more than 50 % of the days": a count, a share or a
# stretch of what is shown, none of which is a statistic of the whole series
_SOME_OF_THEM = re.compile(rf"(?P<whole>\b(?:these|those|the|all)\s+)?\b(?P<n>\d+)\s+(?:\w+\s+)?{_UNITS}|%\s*of\b|"
                           rf"\b(?:half|most|majority|minority|share|proportion|fraction)\s+of\b")
_CHANGES = re.compile(r"\b(?:changes?|differences?|increments?|returns?)\b")
_STATISTICS = ("mean", "median", "max", "min", "sum", "range", "spread")
_AGGREGATES = ("mean", "median", "sum", "range", "spread")  # of the whole stretch, whatever quantifier it has

Compare = Callable[[float, float], bool]


def _op(word: str) -> Compare:
    below = re.fullmatch(_BELOW, word) is not None
    return (lambda a, b: a < b) if below else (lambda a, b: a > b)


def _claim(item: Item) -> str:
    """The statement itself: what follows "True or false:", else the whole question, lower case."""
    parts = _CLAIM.split(item.question, maxsplit=1)
    return " ".join(parts[-1].split()).lower()


def _named(item: Item, claim: str) -> list[tuple[int, np.ndarray]]:
    """The series shown whose names the claim uses, in the order it first uses them."""
    found = []
    for s in item.series:
        name = " ".join(s.name.lower().replace("_", " ").split())
        at = claim.replace("_", " ").find(name) if len(name) >= 3 else -1
        if at >= 0 and len(s.values) >= 2:
            found.append((at, np.asarray(s.values, dtype=float)))
    return sorted(found, key=lambda pair: pair[0])


def _statistics(claim: str, item: Item) -> list[str]:
    text = normal_text(claim)
    for s in item.series:  # `temp_min` names a channel, not a minimum
        text = text.replace(normal_text(s.name), " ")
    return [q for q in _STATISTICS if q in quantities(text)]


def _forms(claim: str, values: np.ndarray) -> list[np.ndarray]:
    """The values a statement may be about: the series, and its steps where it speaks of changes (a
    series shown may hold the changes already: "the mean quarterly change of consumption")."""
    return [values, np.diff(values)] if _CHANGES.search(claim) else [values]


def _against_threshold(item: Item, claim: str, match: re.Match[str], *, negated: bool) -> set[bool] | None:
    """A statement comparing the series shown with a printed number; `negated`: the comparison itself
    is ("on every day it was not below 3"), not the quantifier over it."""
    if _COUNTED.match(match["after"]):
        return None  # "on more than 3 days": a count, not a value
    level = float(match["n"].replace("−", "-").replace(",", ""))
    decimals = len(match["n"].split(".")[1]) if "." in match["n"] else 0
    below = (re.fullmatch(_BELOW, match["op"]) is not None) is not negated
    if _EXISTS.search(claim) or _FORALL.search(claim):
        reading = [("min" if below else "max") if _EXISTS.search(claim) else ("max" if below else "min")]
        # "across all days the mean was above 4": the quantifier ranges over what the mean is taken of
        reading += [s for s in _statistics(claim, item) if s in _AGGREGATES]
    else:
        reading = _statistics(claim, item)
    named = [values for _, values in _named(item, claim)]
    shown = named or [np.asarray(s.values, dtype=float) for s in item.series if len(s.values) >= 2]
    if not reading or not shown:
        return None
    truths: set[bool] = set()
    for values in (form for series_shown in shown for form in _forms(claim, series_shown)):
        for statistic in reading:
            for value in STATISTICS[statistic](values):
                if abs(value - level) <= 0.5 * 10.0 ** -decimals:  # the printed number rounds it: either
                    truths |= {True, False}
                else:
                    truths.add(value < level if below else value > level)
    return truths


def _between_series(item: Item, claim: str, op: str) -> set[bool] | None:
    """A statement comparing a statistic of one series shown with the same statistic of another."""
    named = _named(item, claim)
    reading = _statistics(claim, item)
    if len(named) != 2 or not reading:
        return None
    compare = _op(op)
    (_, first), (_, second) = named
    truths: set[bool] = set()
    # "the maximum of income was above the mean of consumption": each statistic named may be either side's
    for left, right in zip(_forms(claim, first), _forms(claim, second), strict=True):
        for one in reading:
            for other in reading:
                for a in STATISTICS[one](left):
                    for b in STATISTICS[other](right):
                        truths |= {True, False} if np.isclose(a, b) else {compare(a, b)}
    return truths


def statement_truths(item: Item) -> set[bool] | None:
    """The truth of a true/false item's statement under each of its readings on the series shown
    (both when a reading sits on the printed number), or None where the statement is not read."""
    if item.kind is not ItemKind.tf or not item.series:
        return None
    claim = _claim(item)
    negations = list(_NEGATION.finditer(claim))
    lengths = {str(len(s.values)) for s in item.series}  # "these 10 days" over 10 shown: all of them
    partial = [some for some in _SOME_OF_THEM.finditer(claim) if not (some["whole"] and some["n"] in lengths)]
    if len(negations) > 1 or partial:
        return None
    # a quantifier before the negation ("on every day it was not below 3") negates the comparison, one
    # after it ("it was not above 3 on any day", "not every day was below 3") the whole statement
    quantified = [q.start() for q in (_EXISTS.search(claim), _FORALL.search(claim)) if q is not None]
    inside = bool(negations) and any(at < negations[0].start() for at in quantified)
    threshold = _THRESHOLD.search(claim)
    if threshold is not None:
        truths = _against_threshold(item, claim, threshold, negated=inside)
    elif (compared := _COMPARED.search(claim)) is not None:
        truths = _between_series(item, claim, compared["op"])
    else:
        return None
    if truths is None:
        return None
    return {not t for t in truths} if negations and not inside else truths
