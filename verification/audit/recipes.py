"""A channel's `derived=` text read as a recipe the audit recomputes on the named records.

A channel that is not a column as it is says how it was made: `series(values, derived="7-day
rolling mean of temp_max")`. The text is read in a small vocabulary a user can read and write:

- a rolling mean, sum, min, max, median or std over N ("7-day rolling mean of temp_max", "rolling
  sum of precipitation over 3 days", "30-day moving average of close", "temp_max.rolling(7).mean()");
- a difference or a percentage change, over one step or N ("daily change of close", "7-day change
  of close", "daily percentage change of close", "daily return of close", "log return of close");
- a resample by hour, day, week, month, quarter or year with an aggregate ("monthly total of
  precipitation", "weekly mean of temp_max", "daily max of temperature", "mean per month of wind");
- a z-score ("z-score of close", "30-day rolling z-score of close"), a log ("log of close", "log10 of
  volume");
- a unit conversion ("temp_max in degF", "precipitation converted to inches");
- the sum, difference, product or ratio of two columns ("temp_max - temp_min", "close / open",
  "difference between temp_max and temp_min", "ratio of close to open"), or of a column and a
  number ("volume / 1e6", "volume in millions");
- nested ("7-day rolling mean of temp_max in degF", "monthly total of precipitation in inches").

`parse_recipe` reads a text into the recipes it can mean (empty: the vocabulary cannot read it);
`readings` computes every reading a recipe admits on a table (trailing or centred window, week
anchors, z-score over the stretch shown or the record, ddof 0 or 1, a window in rows or in time);
`compare` matches a channel with one reading, point by point at its timestamps (or as a stretch
when it has none). A reading the text does not say is never tried: "5-day mean" is never a 10-day
mean.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.verification.audit.dates import Timeline, When
from itemsmith.verification.audit.units import Unit, canonical_unit, conversions, units_of

__all__ = ["VOCABULARY", "Change", "Column", "Combine", "Compared", "Convert", "Log", "Reading", "Recipe", "Resample",
           "Rolling", "Table", "Tolerance", "ZScore", "compare", "describe", "parse_recipe", "readings", "stamp_rows"]

VOCABULARY = ('rolling mean/sum/min/max/median/std over N ("7-day rolling mean of temp_max", "rolling sum of '
              'precipitation over 3 days"); difference or percentage change ("daily change of close", "7-day change '
              'of close", "daily percentage change of close", "log return of close"); resample with an aggregate '
              '("monthly total of precipitation", "weekly mean of temp_max"); "z-score of close"; "log of close"; unit '
              'conversion ("temp_max in degF"); a scale ("volume in millions", "volume / 1e6"); two columns '
              '("temp_max - temp_min", "close / open", "sum of a and b"); nested ("7-day rolling mean of temp_max in '
              'degF")')

_AGGREGATES = ("mean", "sum", "min", "max", "median", "std", "first", "last", "count")
_OPS: dict[str, Callable[[Any, Any], Any]] = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
_SCALE = re.compile(r"(?:in )?(?P<n>hundreds|thousands|millions|billions)(?: of \w+)?")
_MAX_READINGS = 96


# --- recipes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Rolling:
    of: Recipe
    how: str
    n: int
    unit: str = "row"  # "row" or a time unit ("day", "hour", "week", ...)
    centred: bool | None = False  # None: the text does not say (trailing or centred)


@dataclass(frozen=True)
class Change:
    of: Recipe
    kind: str = "diff"  # "diff", "pct" (a relative change) or "log" (a log return)
    n: int = 1
    unit: str = "row"
    absolute: bool | None = False  # None: signed or absolute ("absolute change")
    scales: tuple[float, ...] = (1.0,)  # a percentage: (100,); a return: (1, 100)


@dataclass(frozen=True)
class Resample:
    of: Recipe
    freq: str  # "H", "D", "W", "M", "Q", "Y"
    how: str
    anchors: tuple[int, ...] = tuple(range(7))  # weeks: the weekday a week starts on (0 = Monday)


@dataclass(frozen=True)
class ZScore:
    of: Recipe
    n: int | None = None  # a rolling z-score over n (unit), else over the stretch shown or the record
    unit: str = "row"


@dataclass(frozen=True)
class Log:
    of: Recipe
    bases: tuple[str, ...] = ("e", "10")


@dataclass(frozen=True)
class Convert:
    of: Recipe
    unit: Unit


@dataclass(frozen=True)
class Constant:
    """A number in a recipe ("volume / 1e6", "volume in millions")."""

    value: float


@dataclass(frozen=True)
class Combine:
    a: Recipe
    b: Recipe
    op: str  # "+", "-", "*", "/"
    either_order: bool = False  # "difference between a and b": a - b or b - a


Recipe = Column | Constant | Rolling | Change | Resample | ZScore | Log | Convert | Combine

_FREQ_WORDS = {"H": "hourly", "D": "daily", "W": "weekly", "M": "monthly", "Q": "quarterly", "Y": "yearly"}


def describe(recipe: Recipe) -> str:
    """The recipe in the vocabulary's own words."""
    match recipe:
        case Column(name):
            return name
        case Constant(value):
            return f"{value:g}"
        case Rolling(of, how, n, unit, centred):
            where = "centred " if centred else "" if centred is False else ""
            return f"{n}-{unit} {where}rolling {how} of {describe(of)}"
        case Change(of, kind, n, unit, absolute, _):
            what = {"diff": "change", "pct": "percentage change", "log": "log return"}[kind]
            return f"{'absolute ' if absolute else ''}{n}-{unit} {what} of {describe(of)}"
        case Resample(of, freq, how, _):
            return f"{_FREQ_WORDS[freq]} {how} of {describe(of)}"
        case ZScore(of, n, unit):
            return f"{f'{n}-{unit} rolling ' if n else ''}z-score of {describe(of)}"
        case Log(of, bases):
            return f"{'log10' if bases == ('10',) else 'log'} of {describe(of)}"
        case Convert(of, unit):
            return f"{describe(of)} in {unit.name}"
        case Combine(a, b, op, _):
            return f"{describe(a)} {op} {describe(b)}"
    raise TypeError(recipe)


# --- reading a text --------------------------------------------------------------------------------

_UNIT_WORDS = {
    "row": ("row", "rows", "point", "points", "sample", "samples", "observation", "observations", "reading",
            "readings", "value", "values", "step", "steps", "period", "periods", "trading day", "trading days",
            "session", "sessions", "bar", "bars", "lag", "lags", "record", "records", "obs"),
    "minute": ("minute", "minutes", "min", "mins"),
    "hour": ("hour", "hours", "h", "hr", "hrs"),
    "day": ("day", "days", "d", "calendar day", "calendar days"),
    "week": ("week", "weeks", "wk", "wks"),
    "month": ("month", "months", "mo"),
    "year": ("year", "years", "yr", "yrs"),
}
_UNIT_OF = {w: u for u, words in _UNIT_WORDS.items() for w in words}
_UNIT_RE = "|".join(sorted((re.escape(w) for w in _UNIT_OF), key=len, reverse=True))
_UNIT_DAYS = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "month": 365.25 / 12, "year": 365.25}
_WINDOW = re.compile(rf"\b(?:window of |over |across |using |with )?(?:a |an )?(?:window of )?"
                     rf"(?:the (?:last |past |previous |preceding ))?(\d+)\s*-?\s*({_UNIT_RE})?\b(?:\s*window)?")
# words and phrases of an operation, replaced by one token each (longest first)
_PHRASES = (
    (r"z[- ]?scores?|standard scores?|z[- ]normali[sz]ed|standardi[sz]ed|standardi[sz]ation", " ZSCORE "),
    (r"day[- ]over[- ]day|\bdod\b", " LAG:1:day "), (r"week[- ]over[- ]week|\bwow\b", " LAG:1:week "),
    (r"month[- ]over[- ]month|\bmom\b", " LAG:1:month "), (r"year[- ]over[- ]year|\byoy\b", " LAG:1:year "),
    (r"log(?:arithmic)?[- ]?(?:returns?|changes?|differences?|diffs?)", " LOGRET "),
    (r"(?:percentage|percent|pct|%)[ _-]?(?:changes?|differences?|increases?|growth)|pct_change", " PCT "),
    (r"growth rates?|rates? of change|relative changes?|simple returns?|returns?", " RET "),
    (r"first[- ](?:order )?differences?|differences?|differenced|differencing|diffs?|changes?|increments?|deltas?",
     " DIFF "),
    (r"natural log(?:arithm)?s?|\bln\b", " LN "),
    (r"log[- _]?10|log(?:arithm)?s? (?:in |with )?base[- ]10|base[- ]10 log(?:arithm)?s?|common log(?:arithm)?s?",
     " LOG10 "),
    (r"log[- _]?2\b|log(?:arithm)?s? (?:in |with )?base[- ]2", " LOG2 "),
    (r"log(?:arithm)?s?|log[- ]transform(?:ed|ation)?|logged", " LOG "),
    (r"standard deviations?|std\.? dev\.?|stdev|\bstd\b|\bsd\b", " std "),
    (r"moving averages?|rolling averages?|running averages?|\bsma\b", " rolling mean "),
    (r"resampled (?:to|by|at|into) (?:a |an )?(\w+)(?: frequency| resolution| periods?| bins?)?", r" per \1 "),
    (r"(?:per|by|each|every|for each|in each|over each) (calendar )?(hour|day|week|month|quarter|year)s?\b",
     r" FREQ:\2 "),
)
_PHRASES_RE = [(re.compile(p), r) for p, r in _PHRASES]
_AGG_WORDS = {"mean": "mean", "average": "mean", "avg": "mean", "averaged": "mean", "sum": "sum", "total": "sum",
              "totals": "sum", "summed": "sum", "accumulated": "sum", "cumulative": None, "min": "min",
              "minimum": "min", "lowest": "min", "max": "max", "maximum": "max", "highest": "max", "median": "median",
              "std": "std", "count": "count", "number": "count", "first": "first", "last": "last", "means": "mean",
              "sums": "sum"}
_FREQ_OF = {"hourly": "H", "hour": "H", "daily": "D", "day": "D", "weekly": "W", "week": "W", "monthly": "M",
            "month": "M", "quarterly": "Q", "quarter": "Q", "yearly": "Y", "annual": "Y", "annually": "Y",
            "year": "Y", "calendar": None}
_FILLERS = frozenset("the a an its of rolling moving running window windowed simple arithmetic computed calculated "
                     "values value series data over across trailing backward backwards centred centered center "
                     "centre resampled aggregated aggregate in".split())


@dataclass(frozen=True)
class _Op:
    """An operation phrase read ("7-day rolling mean"): what it does to the recipe it is applied to."""

    kind: str  # "rolling", "change", "resample", "zscore", "log"
    how: str = ""
    n: int | None = None
    unit: str = "row"
    freq: str = ""
    centred: bool | None = False
    change: str = "diff"
    absolute: bool | None = False
    scales: tuple[float, ...] = (1.0,)
    bases: tuple[str, ...] = ("e", "10")

    def apply(self, of: Recipe) -> Recipe | None:
        if self.kind == "rolling":
            return None if self.n is None else Rolling(of, self.how, self.n, self.unit, self.centred)
        if self.kind == "change":
            return Change(of, self.change, self.n or 1, self.unit, self.absolute, self.scales)
        if self.kind == "resample":
            return Resample(of, self.freq, self.how)
        if self.kind == "zscore":
            return ZScore(of, self.n, self.unit)
        return Log(of, self.bases)


def _op(phrase: str) -> _Op | None:
    """An operation phrase ("7-day rolling mean", "monthly total", "daily percentage change"), or None."""
    text = f" {phrase.replace('(', ' ').replace(')', ' ').replace(',', ' ')} "
    windows = list(_WINDOW.finditer(text))
    if len(windows) > 1:
        return None
    n, unit = None, "row"
    if windows:
        n, unit = int(windows[0][1]), _UNIT_OF.get(windows[0][2] or "", "row")
        text = text[:windows[0].start()] + " " + text[windows[0].end():]
        if n < 1:
            return None
    for pattern, token in _PHRASES_RE:
        text = pattern.sub(token, text)
    tokens = text.split()
    centred: bool | None = False
    if any(t in ("centred", "centered", "center", "centre") for t in tokens):
        centred = True
    elif not any(t in ("trailing", "backward", "backwards") for t in tokens):
        centred = None
    hows: set[str] = {how for t in tokens if (how := _AGG_WORDS.get(t)) is not None}
    freqs = [t for t in tokens if t in _FREQ_OF or t.startswith("FREQ:")]
    lags = [t for t in tokens if t.startswith("LAG:")]
    kinds = {t for t in tokens if t in ("ZSCORE", "LOGRET", "PCT", "RET", "DIFF", "LN", "LOG10", "LOG2", "LOG")}
    absolute = any(t in ("absolute", "abs") for t in tokens)
    known = set(_AGG_WORDS) | set(_FREQ_OF) | _FILLERS | kinds | {"absolute", "abs", "per", "by"} | set(freqs) | set(lags)
    if any(t not in known for t in tokens) or "cumulative" in tokens or len(hows) > 1 or len(freqs) > 1:
        return None
    freq = None
    if freqs:
        word = freqs[0].removeprefix("FREQ:")
        freq = _FREQ_OF.get(word)
        if freq is None:
            return None
    if lags:
        if n is not None or freq is not None or len(lags) > 1:
            return None
        _, count, lag_unit = lags[0].split(":")
        n, unit = int(count), lag_unit
    change_kinds = kinds & {"LOGRET", "PCT", "RET", "DIFF"}
    if "ZSCORE" in kinds:
        return None if hows or freq or change_kinds or kinds - {"ZSCORE"} else _Op("zscore", n=n, unit=unit)
    if change_kinds:
        if hows or len(change_kinds) > 1 and change_kinds != {"PCT", "DIFF"} or kinds - change_kinds:
            return None
        if freq is not None:  # "daily change": one day; "monthly return": one month
            if n is not None:
                return None
            n, unit = 1, {"H": "hour", "D": "day", "W": "week", "M": "month", "Q": "month", "Y": "year"}[freq]
            n = 3 if freq == "Q" else n
        kind = "log" if "LOGRET" in change_kinds else "pct" if change_kinds & {"PCT", "RET"} else "diff"
        scales = (100.0,) if "PCT" in change_kinds else (1.0, 100.0) if kind != "diff" else (1.0,)
        return _Op("change", n=n, unit=unit, change=kind, absolute=None if absolute else False, scales=scales)
    if absolute:
        return None
    if kinds:
        if hows or freq or n is not None or len(kinds) > 1:
            return None
        bases = {"LN": ("e",), "LOG10": ("10",), "LOG2": ("2",), "LOG": ("e", "10")}[kinds.pop()]
        return _Op("log", bases=bases)
    if not hows:
        return None
    how = hows.pop()
    if freq is not None:
        return None if n is not None else _Op("resample", how=how, freq=freq)
    return _Op("rolling", how=how, n=n, unit=unit, centred=centred)


def _key(name: str) -> str:
    return " ".join(re.sub(r"[\s_\-]+", " ", name.casefold()).split())


class _Reader:
    """Reads recipe texts against the columns that exist."""

    def __init__(self, columns: Iterable[str]) -> None:
        self.columns = {_key(c): c for c in columns}

    def column(self, text: str) -> Column | None:
        text = text.strip().strip("`'\"")
        quoted = re.fullmatch(r"(?:df|data|frame|record|series)?\s*(?:\[\s*['\"](.+?)['\"]\s*\]|\.(\w+))", text)
        if quoted:
            text = quoted[1] or quoted[2]
        text = re.sub(r"^(?:the |column |channel )+", "", text.strip().strip("`'\""))
        text = re.sub(r"(?: values| series| column| channel| data)+$", "", text)
        for candidate in (text, re.sub(r"^(?:daily|hourly|raw|observed|measured) ", "", text)):
            if (name := self.columns.get(_key(candidate))) is not None:
                return Column(name)
        return None

    def parse(self, text: str, depth: int = 0) -> list[Recipe]:
        if depth > 4:
            return []
        text = " ".join(text.replace("–", "-").replace("—", "-").replace("−", "-").replace("×", "*")
                        .replace("÷", "/").split()).strip().rstrip(".;:,").strip()
        text = re.sub(r"^(?:the|a|an) ", "", text)
        if not text:
            return []
        while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
            text = text[1:-1].strip()
        if (col := self.column(text)) is not None:
            return [col]
        found: list[Recipe] = []
        if re.fullmatch(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?", text):
            return [Constant(float(text))]
        for parse in (self._chain, self._parenthetical, self._scaled, self._converted, self._named_pair, self._binary,
                      self._op_of, self._suffix_op):
            found += parse(text, depth)
            if found:
                break
        return list(dict.fromkeys(found))[:_MAX_READINGS]

    # "temp_max.rolling(7).mean()", "df['close'].pct_change()", "rolling(7).mean() of temp_max"
    _CHAIN = re.compile(r"^(?P<head>.*?)(?P<calls>(?:\.?\w+\([^()]*\))+)$")
    _CALL = re.compile(r"\.?(\w+)\(([^()]*)\)")

    def _chain(self, text: str, depth: int, base: Recipe | None = None) -> list[Recipe]:
        match = self._CHAIN.match(text.replace(" ", ""))
        if match is None:
            return []
        if base is None:
            base = self.column(match["head"])
            if base is None:
                return []
        elif match["head"]:
            return []
        recipe: Recipe = base
        pending: tuple[str, str] | None = None
        for name, args in self._CALL.findall(match["calls"]):
            args = args.replace("'", "").replace('"', "")
            positional = [a for a in args.split(",") if a and "=" not in a]
            keywords = dict(a.split("=", 1) for a in args.split(",") if "=" in a)
            if name in ("rolling", "resample"):
                if pending is not None:
                    return []
                pending = (name, args)
                continue
            if pending is not None:
                kind, pargs = pending
                pending = None
                if name == "agg" or name == "aggregate":
                    name = positional[0] if positional else ""
                if name not in _AGGREGATES:
                    return []
                if kind == "rolling":
                    rolled = _rolling_args(pargs)
                    if rolled is None:
                        return []
                    n, unit, centred = rolled
                    recipe = Rolling(recipe, name, n, unit, centred)
                else:
                    rule = _resample_rule(pargs)
                    if rule is None:
                        return []
                    freq, anchors = rule
                    recipe = Resample(recipe, freq, name, anchors)
                continue
            lag = int(positional[0]) if positional and positional[0].lstrip("-").isdigit() else \
                int(keywords.get("periods", "1")) if keywords.get("periods", "1").lstrip("-").isdigit() else None
            if name == "diff" and lag:
                recipe = Change(recipe, "diff", lag)
            elif name == "pct_change" and lag:
                recipe = Change(recipe, "pct", lag, scales=(1.0, 100.0))
            elif name == "abs" and not args:
                recipe = Change(recipe.of, recipe.kind, recipe.n, recipe.unit, True, recipe.scales) \
                    if isinstance(recipe, Change) else None  # type: ignore[assignment]
                if recipe is None:
                    return []
            else:
                return []
        return [] if pending is not None else [recipe]

    def _parenthetical(self, text: str, depth: int) -> list[Recipe]:
        """"x (°F)": a unit; "x (7 days)": a window; "label (recipe)", "label: recipe": the recipe."""
        match = re.fullmatch(r"(?P<a>.+?)\s*\((?P<b>[^()]+)\)", text) or \
            re.fullmatch(r"(?P<a>[^:=]+?)\s*[:=]\s*(?P<b>.+)", text)
        if match is None:
            return []
        a, b = match["a"], match["b"]
        if (unit := canonical_unit(b)) is not None:
            return [Convert(r, unit) for r in self.parse(a, depth + 1)]
        if re.fullmatch(rf"(?:window(?: of)? )?\d+\s*-?\s*(?:{_UNIT_RE})?(?: window)?", b.strip()):
            return self._op_of(f"{a} over {b}", depth)
        if (scale := _SCALE.fullmatch(b.strip())) is not None:
            return self._scaled(f"{a} in {scale['n']}", depth)
        first, second = self.parse(b, depth + 1), self.parse(a, depth + 1)
        # "label (recipe)": the recipe; "recipe (words it cannot read)" or two recipes in one text: neither
        return first if first and not second else []

    def _scaled(self, text: str, depth: int) -> list[Recipe]:
        """"volume in millions", "share in percent": the values over (or times) a power of ten."""
        match = re.fullmatch(r"(?P<x>.+?)\s+(?:in|as)\s+(?:(?:a|the) )?(?P<n>hundreds|thousands|millions|billions|"
                             r"percent(?:age)?|%)(?: of \w+)?", text)
        if match is None:
            return []
        factor, op = {"hundreds": (100.0, "/"), "thousands": (1e3, "/"), "millions": (1e6, "/"),
                      "billions": (1e9, "/")}.get(match["n"], (100.0, "*"))
        return [Combine(r, Constant(factor), op) for r in self.parse(match["x"], depth + 1)]

    def _converted(self, text: str, depth: int) -> list[Recipe]:
        match = re.fullmatch(r"(?P<x>.+?)\s+(?:converted (?:from \S+(?: \S+)? )?(?:in)?to|converted in|expressed in|"
                             r"in|to|as)\s+(?P<u>[^\s].*)", text)
        if match is None or (unit := canonical_unit(match["u"])) is None:
            return []
        return [Convert(r, unit) for r in self.parse(match["x"], depth + 1)]

    def _named_pair(self, text: str, depth: int) -> list[Recipe]:
        """"difference between a and b", "sum of a and b", "ratio of a to b", "product of a and b"."""
        match = re.fullmatch(r"(?P<op>difference|spread|gap|sum|total|ratio|product)\s+(?:of|between)\s+"
                             r"(?P<a>.+?)\s+(?:and|to|over)\s+(?P<b>.+)", text)
        if match is None:
            return []
        op = {"difference": "-", "spread": "-", "gap": "-", "sum": "+", "total": "+", "ratio": "/", "product": "*"}[
            match["op"]]
        return self._pair(match["a"], match["b"], op, depth, either=op == "-")

    def _pair(self, a: str, b: str, op: str, depth: int, either: bool = False) -> list[Recipe]:
        left, right = self.parse(a, depth + 1), self.parse(b, depth + 1)
        return [Combine(x, y, op, either) for x in left for y in right]

    _OPERATOR = re.compile(r"\s+(-|\+|/|\*|minus|plus|divided by|times|over)\s+|(?<=\w)(/|\*|\+)(?=\w)|(?<=[a-z_])-(?=[a-z_])")

    def _binary(self, text: str, depth: int) -> list[Recipe]:
        found: list[Recipe] = []
        for match in self._OPERATOR.finditer(text):
            word = match.group(1) or match.group(2) or "-"
            op = {"minus": "-", "plus": "+", "divided by": "/", "times": "*", "over": "/"}.get(word, word)
            a, b = text[:match.start()], text[match.end():]
            if word == "over" and (self.column(a) is None or self.column(b) is None):
                continue  # "over" between two columns is a ratio; elsewhere it is a window ("over 7 days")
            found += self._pair(a, b, op, depth)
        return found

    def _op_of(self, text: str, depth: int) -> list[Recipe]:
        """"<operation> of <recipe>", the operation's window also after the recipe ("rolling mean of x over
        7 days")."""
        found: list[Recipe] = []
        for match in re.finditer(r"\s+(?:of|in|on|for)\s+", text):
            phrase, rest = text[:match.start()], text[match.end():]
            op = _op(phrase) if not self._CHAIN.match(phrase.replace(" ", "")) else None
            inner = [rest]
            if op is not None and op.n is None:
                trailing = re.fullmatch(rf"(?P<x>.+?)\s+(?P<w>(?:over|across|using|with)\s+(?:a |an )?(?:window of )?"
                                        rf"(?:the (?:last |past |previous |preceding ))?\d+\s*-?\s*(?:{_UNIT_RE})?"
                                        rf"(?: window)?)", rest)
                if trailing is not None:
                    windowed = _op(f"{phrase} {trailing['w']}")
                    if windowed is not None:
                        op, inner = windowed, [trailing["x"]]
            if op is not None:
                for of in (r for x in inner for r in self.parse(x, depth + 1)):
                    if (recipe := op.apply(of)) is not None:
                        found.append(recipe)
            elif self._CHAIN.match(phrase.replace(" ", "")):
                for of in self.parse(rest, depth + 1):
                    found += self._chain(phrase, depth, base=of)
            if found:
                return found
        return found

    def _suffix_op(self, text: str, depth: int) -> list[Recipe]:
        """"temp_max 7-day mean", "close daily return", "log close", "monthly precipitation total"."""
        words = text.replace(",", " ").split()
        found: list[Recipe] = []
        for k in range(1, len(words)):
            head, tail = " ".join(words[:k]), " ".join(words[k:])
            for column, phrase in ((head, tail), (tail, head)):
                if (col := self.column(column)) is not None and (op := _op(phrase)) is not None:
                    if (recipe := op.apply(col)) is not None:
                        found.append(recipe)
            for i in range(1, len(words) - k + 1):  # "monthly precipitation total": the column inside
                middle = " ".join(words[k:k + i])
                if (col := self.column(middle)) is not None and 0 < k and k + i < len(words):
                    phrase = " ".join(words[:k] + words[k + i:])
                    if (op := _op(phrase)) is not None and (recipe := op.apply(col)) is not None:
                        found.append(recipe)
        return found


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _rolling_args(args: str) -> tuple[int, str, bool] | None:
    parts = [a.strip() for a in args.split(",") if a.strip()]
    if not parts:
        return None
    window = parts[0].split("=", 1)[-1]
    centred = any(p.replace(" ", "").lower() in ("center=true", "centre=true") for p in parts)
    if window.isdigit():
        return int(window), "row", centred
    timed = re.fullmatch(r"(\d+)\s*([a-z]+)", window.lower())
    unit = {"d": "day", "h": "hour", "min": "minute", "t": "minute", "w": "week"}.get(timed[2]) if timed else None
    return (int(timed[1]), unit, centred) if timed and unit else None


def _resample_rule(args: str) -> tuple[str, tuple[int, ...]] | None:
    rule = args.split(",")[0].split("=", 1)[-1].strip().upper()
    match = re.fullmatch(r"(?:1)?(H|D|B|W|M|ME|MS|BM|BMS|Q|QE|QS|Y|YE|YS|A|AS)(?:-([A-Z]{3}))?", rule)
    if match is None:
        return None
    freq = {"B": "D", "ME": "M", "MS": "M", "BM": "M", "BMS": "M", "QE": "Q", "QS": "Q", "YE": "Y", "YS": "Y", "A": "Y",
            "AS": "Y"}.get(match[1], match[1])
    anchors: tuple[int, ...] = tuple(range(7))
    if freq == "W":  # W-SUN (the default) ends weeks on Sunday: they start on Monday
        days = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
        end = days.index(match[2]) if match[2] in days else 6
        anchors = ((end + 1) % 7,)
    return freq, anchors


@lru_cache(maxsize=4096)
def _parse_cached(text: str, columns: tuple[str, ...]) -> tuple[Recipe, ...]:
    return tuple(_Reader(columns).parse(text))


def parse_recipe(text: str, columns: Iterable[str]) -> list[Recipe]:
    """The recipes a `derived=` text can mean over these columns (empty: the vocabulary cannot read it)."""
    return list(_parse_cached(text.casefold().strip(), tuple(sorted(set(columns)))))


# --- computing the readings ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Table:
    """Columns over shared rows (the named records one after another, or one channel of the item)."""

    label: str
    columns: dict[str, np.ndarray]
    timeline: Timeline | None
    units: dict[str, Unit | None] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Reading:
    """One way a recipe reads on a table: a value per row (or per bin), with the rows' periods."""

    values: np.ndarray
    timeline: Timeline | None
    label: str
    unit: Unit | None = None
    interval: bool = False  # a difference or a spread: converts without an offset
    # "computed on the stretch shown": values for rows first..last from the source rows alone (a rolling
    # window with min_periods=1 on a slice; a z-score over the window)
    over_shown: Callable[[np.ndarray], np.ndarray] | None = None
    source: np.ndarray | None = None
    # a resample of a slice: its first bin may hold a suffix of the bin's rows, its last bin a prefix
    bins: tuple[np.ndarray, np.ndarray, np.ndarray, str, int] | None = None  # (source, lo, hi, how, ddof)


def _aggregate(values: np.ndarray, how: str, ddof: int = 1) -> float:
    values = values[~np.isnan(values)]
    if how == "count":
        return float(len(values))
    if how == "sum":
        return float(values.sum())
    if not len(values) or (how == "std" and len(values) <= ddof):
        return float("nan")
    aggregates: dict[str, Callable[[np.ndarray], Any]] = {
        "mean": np.mean, "min": np.min, "max": np.max, "median": np.median, "first": lambda v: v[0],
        "last": lambda v: v[-1], "std": lambda v: np.std(v, ddof=ddof)}
    return float(aggregates[how](values))


def _step_days(timeline: Timeline | None) -> float | None:
    if timeline is None or len(timeline) < 2:
        return None
    steps = np.diff(timeline.starts).astype("timedelta64[s]").astype(float) / 86400
    steps = steps[steps > 0]
    return float(np.median(steps)) if len(steps) else None


def _window_rows(n: int, unit: str, timeline: Timeline | None) -> list[int]:
    """How many rows a window of n units spans (a time unit over the rows' step; none if it does not divide)."""
    if unit == "row":
        return [n]
    step = _step_days(timeline)
    if step is None:
        return [n]
    rows = n * _UNIT_DAYS[unit] / step
    if unit in ("month", "year") and 27 <= step <= 32:  # monthly rows: months count as rows
        rows = n * (12 if unit == "year" else 1)
    elif unit == "year" and step >= 360:
        rows = n
    whole = round(rows)
    return [int(whole)] if whole >= 1 and abs(rows - whole) <= 0.05 * rows else []


def _rolling(values: np.ndarray, n: int, how: str, centred: bool, ddof: int) -> np.ndarray:
    rolled = pd.Series(values).rolling(n, center=centred)
    if how == "std":
        return rolled.std(ddof=ddof).to_numpy(dtype=float)
    return getattr(rolled, how)().to_numpy(dtype=float)


def _partial_rolling(n: int, how: str, ddof: int) -> Callable[[np.ndarray], np.ndarray]:
    def run(stretch: np.ndarray) -> np.ndarray:
        rolled = pd.Series(stretch).rolling(n, min_periods=1)
        return (rolled.std(ddof=ddof) if how == "std" else getattr(rolled, how)()).to_numpy(dtype=float)
    return run


def _zscore(ddof: int) -> Callable[[np.ndarray], np.ndarray]:
    def run(stretch: np.ndarray) -> np.ndarray:
        finite = stretch[~np.isnan(stretch)]
        spread = float(np.std(finite, ddof=ddof)) if len(finite) > ddof else 0.0
        with np.errstate(invalid="ignore", divide="ignore"):
            return (stretch - float(np.mean(finite))) / spread if spread > 0 else np.full(len(stretch), np.nan)
    return run


def _calendar_lagged(values: np.ndarray, timeline: Timeline, n: int, unit: str) -> np.ndarray | None:
    """The value n units of calendar time before each row (NaN where no row is at that time)."""
    starts = pd.DatetimeIndex(timeline.starts)
    if unit in ("month", "year"):
        before = starts - pd.DateOffset(months=n * (12 if unit == "year" else 1))
    elif unit in _UNIT_DAYS:
        before = starts - pd.Timedelta(days=n * _UNIT_DAYS[unit])
    else:
        return None
    where = pd.Index(starts).get_indexer(before)
    lagged = np.where(where >= 0, values[np.maximum(where, 0)], np.nan)
    return lagged


def _bins(timeline: Timeline, freq: str, anchor: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(bin start per row, bin end per row) of a calendar resample."""
    starts = timeline.starts
    if freq == "H":
        key = starts.astype("datetime64[h]")
        return key.astype("datetime64[s]"), (key + 1).astype("datetime64[s]")
    days = starts.astype("datetime64[D]")
    if freq == "D":
        return days.astype("datetime64[s]"), (days + 1).astype("datetime64[s]")
    if freq == "W":
        weekday = (days.astype(int) + 3) % 7  # 1970-01-01 was a Thursday
        first = days - ((weekday - anchor) % 7).astype("timedelta64[D]")
        return first.astype("datetime64[s]"), (first + 7).astype("datetime64[s]")
    months = starts.astype("datetime64[M]")
    if freq == "M":
        return months.astype("datetime64[s]"), (months + 1).astype("datetime64[s]")
    if freq == "Q":
        index = months.astype(int)
        first = (index - index % 3).astype("datetime64[M]")
        return first.astype("datetime64[s]"), (first + 3).astype("datetime64[s]")
    if freq == "Y":
        years = starts.astype("datetime64[Y]")
        return years.astype("datetime64[s]"), (years + 1).astype("datetime64[s]")
    return None


def _resampled(reading: Reading, recipe: Resample) -> list[Reading]:
    if reading.timeline is None or reading.over_shown is not None:
        return []
    if len(reading.timeline) > 1 and (np.diff(reading.timeline.starts) < np.timedelta64(0, "s")).any():
        return []
    out = []
    anchors = recipe.anchors if recipe.freq == "W" else (0,)
    for anchor in anchors:
        bounds = _bins(reading.timeline, recipe.freq, anchor)
        if bounds is None:
            return []
        first, end = bounds
        change = np.flatnonzero(np.r_[True, first[1:] != first[:-1]])
        lo, hi = change, np.r_[change[1:], len(first)]
        groups = pd.Series(reading.values).groupby(np.repeat(np.arange(len(lo)), hi - lo))
        for ddof in (1, 0) if recipe.how == "std" else (1,):
            values = (groups.std(ddof=ddof) if recipe.how == "std" else getattr(groups, recipe.how)()).to_numpy(float)
            where = f"weeks from {['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][anchor]}" \
                if recipe.freq == "W" else ""
            out.append(Reading(values, Timeline(first[lo], end[lo]),
                               f"{_FREQ_WORDS[recipe.freq]} {recipe.how}{f' ({where})' if where else ''}",
                               None if recipe.how == "count" else reading.unit, reading.interval,
                               bins=(reading.values, lo, hi, recipe.how, ddof)))
    return out


def _elementwise(reading: Reading, fn: Callable[[np.ndarray], np.ndarray], label: str, unit: Unit | None,
                 interval: bool) -> Reading:
    inner = reading.over_shown
    return Reading(fn(reading.values), reading.timeline, label, unit, interval,
                   over_shown=None if inner is None else (lambda stretch: fn(inner(stretch))), source=reading.source)


def readings(recipe: Recipe, table: Table) -> list[Reading]:
    """Every reading of `recipe` on `table` the recipe's text admits."""
    return _readings(recipe, table)[:_MAX_READINGS]


def _readings(recipe: Recipe, table: Table) -> list[Reading]:
    match recipe:
        case Column(name):
            if name not in table.columns:
                return []
            return [Reading(table.columns[name], table.timeline, name, table.units.get(name))]
        case Rolling(of, how, n, unit, centred):
            out = []
            for inner in _readings(of, table):
                if inner.over_shown is not None:
                    continue
                for ddof in (1, 0) if how == "std" else (1,):
                    for rows in _window_rows(n, unit, inner.timeline):
                        for centre in (False, True) if centred is None else (centred,):
                            out.append(Reading(_rolling(inner.values, rows, how, centre, ddof), inner.timeline,
                                               f"{'centred' if centre else 'trailing'} {rows}-row {how}", inner.unit,
                                               inner.interval or how == "std"))
                        if not centred:  # computed on the stretch shown with partial first windows
                            out.append(Reading(inner.values, inner.timeline, f"{rows}-row {how} from the first row shown",
                                               inner.unit, inner.interval or how == "std",
                                               over_shown=_partial_rolling(rows, how, ddof), source=inner.values))
                    if unit in ("minute", "hour", "day", "week") and inner.timeline is not None and not centred:
                        indexed = pd.Series(inner.values, index=pd.DatetimeIndex(inner.timeline.starts))
                        try:
                            rolled = indexed.rolling(pd.Timedelta(days=n * _UNIT_DAYS[unit]))
                            values = (rolled.std(ddof=ddof) if how == "std" else getattr(rolled, how)())
                        except ValueError:  # rows out of time order
                            continue
                        out.append(Reading(values.to_numpy(dtype=float), inner.timeline, f"{n}-{unit} time window {how}",
                                           inner.unit, inner.interval or how == "std"))
            return out
        case Change(of, kind, n, unit, absolute, scales):
            out = []
            for inner in _readings(of, table):
                if inner.over_shown is not None:
                    continue
                lagged: list[tuple[np.ndarray, str]] = []
                for rows in _window_rows(n, unit, inner.timeline):
                    lagged.append((np.r_[np.full(min(rows, len(inner.values)), np.nan), inner.values[:-rows]]
                                   [:len(inner.values)], f"{rows}-row"))
                if unit != "row" and inner.timeline is not None:
                    calendar = _calendar_lagged(inner.values, inner.timeline, n, unit)
                    if calendar is not None:
                        lagged.append((calendar, f"{n}-{unit} calendar"))
                for before, label in lagged:
                    with np.errstate(invalid="ignore", divide="ignore"):
                        if kind == "diff":
                            variants = [(inner.values - before, "change")]
                        elif kind == "pct":
                            variants = [((inner.values / before - 1.0) * s, f"relative change x{s:g}") for s in scales]
                        else:
                            variants = [(np.log(inner.values / before) * s, f"log return x{s:g}") for s in scales]
                    for values, what in variants:
                        for absolute_value in (False, True) if absolute is None else (absolute,):
                            shown = np.abs(values) if absolute_value else values
                            out.append(Reading(np.where(np.isfinite(shown), shown, np.nan), inner.timeline,
                                               f"{label} {'absolute ' if absolute_value else ''}{what}",
                                               inner.unit if kind == "diff" else None, True))
            return out
        case Resample():
            return [r for inner in _readings(recipe.of, table) for r in _resampled(inner, recipe)]
        case ZScore(of, n, unit):
            out = []
            for inner in _readings(of, table):
                if inner.over_shown is not None:
                    continue
                for ddof in (0, 1):
                    if n is None:
                        whole = _zscore(ddof)(inner.values)
                        out.append(Reading(whole, inner.timeline, f"z-score over the record (ddof {ddof})"))
                        out.append(Reading(inner.values, inner.timeline, f"z-score over the stretch shown (ddof {ddof})",
                                           over_shown=_zscore(ddof), source=inner.values))
                        continue
                    for rows in _window_rows(n, unit, inner.timeline):
                        for centre in (False, True):
                            rolled = pd.Series(inner.values).rolling(rows, center=centre)
                            with np.errstate(invalid="ignore", divide="ignore"):
                                z = ((inner.values - rolled.mean().to_numpy()) / rolled.std(ddof=ddof).to_numpy())
                            out.append(Reading(np.where(np.isfinite(z), z, np.nan), inner.timeline,
                                               f"{'centred' if centre else 'trailing'} {rows}-row z-score (ddof {ddof})"))
            return out
        case Log(of, bases):
            out = []
            for inner in _readings(of, table):
                for base in bases:
                    fn = {"e": np.log, "10": np.log10, "2": np.log2}[base]

                    def log(values: np.ndarray, fn: Callable[[np.ndarray], np.ndarray] = fn) -> np.ndarray:
                        with np.errstate(invalid="ignore", divide="ignore"):
                            out_values = fn(values)
                        return np.where(np.isfinite(out_values), out_values, np.nan)
                    out.append(_elementwise(inner, log, f"log{'' if base == 'e' else base}", None, False))
            return out
        case Convert(of, target):
            out = []
            for inner in _readings(of, table):
                sources = [inner.unit] if inner.unit is not None else units_of(target.quantity)
                for from_unit in sources:
                    factors = [(1.0, 0.0)] if from_unit == target else \
                        conversions(from_unit, target, interval=inner.interval)
                    for scale, offset in factors:
                        def convert(v: np.ndarray, scale: float = scale, offset: float = offset) -> np.ndarray:
                            return v * scale + offset
                        out.append(_elementwise(inner, convert, f"{inner.label} from {from_unit.name} to {target.name}",
                                                target, inner.interval))
            return out
        case Combine(a, Constant(value), op, _) if not isinstance(a, Constant):
            def by_number(v: np.ndarray, value: float = value, op: str = op) -> np.ndarray:
                return _OPS[op](v, value)
            return [_elementwise(inner, by_number, f"{inner.label} {op} {value:g}", inner.unit if op in "+-" else None,
                                 inner.interval) for inner in _readings(a, table)]
        case Combine(Constant(value), b, op, _) if not isinstance(b, Constant):
            def of_number(v: np.ndarray, value: float = value, op: str = op) -> np.ndarray:
                return _OPS[op](value, v)
            return [_elementwise(inner, of_number, f"{value:g} {op} {inner.label}", inner.unit if op in "+*" else None,
                                 inner.interval) for inner in _readings(b, table)]
        case Constant():
            return []
        case Combine(a, b, op, either_order):
            out = []
            pairs = [(a, b), (b, a)] if either_order else [(a, b)]
            for x, y in pairs:
                for left in _readings(x, table):
                    for right in _readings(y, table):
                        if left.over_shown is not None or right.over_shown is not None \
                                or len(left.values) != len(right.values):
                            continue
                        with np.errstate(invalid="ignore", divide="ignore"):
                            values = _OPS[op](left.values, right.values)
                        same = left.unit if op in "+-" and left.unit == right.unit else None
                        out.append(Reading(np.where(np.isfinite(values), values, np.nan), left.timeline,
                                           f"{left.label} {op} {right.label}", same, op == "-"))
            return out
    raise TypeError(recipe)


# --- comparing a channel with a reading ------------------------------------------------------------


@dataclass(frozen=True)
class Tolerance:
    """When a value shown equals a value computed: within half a unit of the last decimal shown (the
    values rounded for display), else up to float noise (`rtol`)."""

    decimals: int | None
    rtol: float

    @classmethod
    def of(cls, shown: np.ndarray, rtol: float) -> Tolerance:
        for d in range(7):
            scaled = shown * 10.0 ** d
            if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
                return cls(d, rtol)
        return cls(None, rtol)

    def close(self, computed: np.ndarray | float, shown: np.ndarray | float) -> np.ndarray:
        noise = self.rtol * np.maximum(1.0, np.abs(shown))
        slack = noise if self.decimals is None else 0.5 * 10.0 ** -self.decimals * (1 + 1e-9) + noise
        with np.errstate(invalid="ignore"):
            return np.abs(np.asarray(computed) - shown) <= slack


@dataclass(frozen=True)
class Compared:
    """A channel against one reading: the points that agree, those it could not compare (the reading
    has no value there: a window reaching past the named records) and those that differ (point, the
    value computed there, None where the reading has no row at that time); by position, every offset
    where the channel is a stretch of the reading."""

    equal: int
    skipped: int
    diffs: list[tuple[int, float | None]]
    offsets: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diffs and self.equal > 0


def _edge_values(reading: Reading, point: int, last: int, row: int) -> list[float]:
    """Values a point at the edge of the channel may also take: partial bins of a resampled slice."""
    if reading.bins is None or point not in (0, last) or last == 0:
        return []
    source, lo, hi, how, ddof = reading.bins
    a, b = int(lo[row]), int(hi[row])
    if point == 0:
        return [_aggregate(source[k:b], how, ddof) for k in range(a + 1, b)]
    return [_aggregate(source[a:k], how, ddof) for k in range(a + 1, b)]


def stamp_rows(timeline: Timeline, stamps: Sequence[Sequence[When]]) -> list[np.ndarray]:
    """The rows each timestamp names (every reading of it)."""
    out = []
    for readings_ in stamps:
        rows = [timeline.rows(w) for w in readings_]
        out.append(np.unique(np.concatenate(rows)) if len(rows) > 1 else rows[0] if rows else np.array([], int))
    return out


def compare(reading: Reading, shown: np.ndarray, stamps: Sequence[Sequence[When]] | None, tolerance: Tolerance,
            candidates: list[np.ndarray] | None = None) -> Compared:
    """The channel's points against the reading: each at its timestamp, in order (a channel may show a
    subset of the rows, every 7th day), or as a stretch when it has no timestamps (or the reading has
    no timeline). `candidates`: the rows of each timestamp, when already looked up on this timeline."""
    if stamps is not None and reading.timeline is not None:
        return _by_time(reading, shown, candidates or stamp_rows(reading.timeline, stamps), tolerance)
    return _by_position(reading, shown, tolerance)


def _by_time(reading: Reading, shown: np.ndarray, candidates: list[np.ndarray], tolerance: Tolerance) -> Compared:
    values = reading.values
    if reading.over_shown is not None:  # the rows shown first, then the values from those rows alone
        aligned, prev = [], -1
        for c in candidates:
            later = c[c > prev]
            if len(later):
                prev = int(later[0])
                aligned.append(prev)
        if not aligned or reading.source is None:
            return Compared(0, 0, [(i, None) for i in range(len(shown))])
        values = np.full(len(reading.source), np.nan)
        values[aligned[0]:aligned[-1] + 1] = reading.over_shown(reading.source[aligned[0]:aligned[-1] + 1])
    if reading.bins is None and all(len(c) == 1 for c in candidates):  # one row per point: at once
        rows = np.array([int(c[0]) for c in candidates])
        if len(rows) < 2 or (np.diff(rows) > 0).all():
            at = values[rows]
            missing = np.isnan(at)
            bad = np.flatnonzero(~tolerance.close(at, shown) & ~missing)
            return Compared(int((~missing).sum()) - len(bad), int(missing.sum()), [(int(i), float(at[i])) for i in bad])
    equal = skipped = 0
    diffs: list[tuple[int, float | None]] = []
    prev = -1
    last = len(shown) - 1
    for i, c in enumerate(candidates):
        later = c[c > prev]
        if not len(later):
            diffs.append((i, None))
            continue
        at = values[later]
        hits = np.flatnonzero(tolerance.close(at, shown[i]))
        if not len(hits) and reading.bins is not None:
            hits = np.array([k for k, r in enumerate(later) if any(
                tolerance.close(e, shown[i]) for e in _edge_values(reading, i, last, int(r)))], dtype=int)
        if len(hits):
            equal += 1
            prev = int(later[hits[0]])
        elif np.isnan(at).all():
            skipped += 1
            prev = int(later[0])
        else:
            first = int(np.flatnonzero(~np.isnan(at))[0])
            diffs.append((i, float(at[first])))
            prev = int(later[first])
    return Compared(equal, skipped, diffs)


def _by_position(reading: Reading, shown: np.ndarray, tolerance: Tolerance) -> Compared:
    n = len(shown)
    source = reading.source if reading.over_shown is not None else reading.values
    if source is None or n > len(source):
        return Compared(0, 0, [(i, None) for i in range(n)])
    if reading.over_shown is not None or n < 3:
        offsets: Iterable[int] = range(len(source) - n + 1)
    else:
        probe = n // 2
        at = source[probe:len(source) - n + probe + 1]
        offsets = np.flatnonzero(tolerance.close(at, shown[probe]) | np.isnan(at)).tolist()
    best: Compared | None = None
    found: list[int] = []
    for offset in offsets:
        window = reading.over_shown(source[offset:offset + n]) if reading.over_shown is not None \
            else source[offset:offset + n]
        missing = np.isnan(window)
        diffs: list[tuple[int, float | None]] = []
        for i in np.flatnonzero(~tolerance.close(window, shown) & ~missing):
            if not any(tolerance.close(e, shown[i]) for e in _edge_values(reading, int(i), n - 1, offset + int(i))):
                diffs.append((int(i), float(window[i])))
        result = Compared(int((~missing).sum()) - len(diffs), int(missing.sum()), diffs)
        if result.ok:
            found.append(offset)
        if best is None or (result.ok, -result.skipped, result.equal) > (best.ok, -best.skipped, best.equal):
            best = result
    if best is None:
        return Compared(0, 0, [(i, None) for i in range(n)])
    return replace(best, offsets=tuple(found))
