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

`parse_recipe` reads a text into the recipes it can mean (empty: the vocabulary cannot read it; a
text with words it cannot read, or two recipes in one text, reads as none). `readings` computes
them on the named records; a reading the text does not say is never tried: "5-day mean" is never a
10-day mean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from itemsmith.verification.audit.units import Unit, canonical_unit

__all__ = ["FREQ_WORDS", "VOCABULARY", "Change", "Column", "Combine", "Constant", "Convert", "Log", "Recipe",
           "Resample", "Rolling", "ZScore", "describe", "parse_recipe"]

VOCABULARY = ('rolling mean/sum/min/max/median/std over N ("7-day rolling mean of temp_max", "rolling sum of '
              'precipitation over 3 days"); difference or percentage change ("daily change of close", "7-day change '
              'of close", "daily percentage change of close", "log return of close"); resample with an aggregate '
              '("monthly total of precipitation", "weekly mean of temp_max"); "z-score of close"; "log of close"; unit '
              'conversion ("temp_max in degF"); a scale ("volume in millions", "volume / 1e6"); two columns '
              '("temp_max - temp_min", "close / open", "sum of a and b"); nested ("7-day rolling mean of temp_max in '
              'degF")')

_AGGREGATES = ("mean", "sum", "min", "max", "median", "std", "first", "last", "count")
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

FREQ_WORDS = {"H": "hourly", "D": "daily", "W": "weekly", "M": "monthly", "Q": "quarterly", "Y": "yearly"}


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
            return f"{FREQ_WORDS[freq]} {how} of {describe(of)}"
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


_NOTE_WORDS = frozenset("resampled aggregated grouped binned by per to with using and then".split())


def _restates(note: str, recipes: list[Recipe]) -> list[Recipe]:
    """The resamplings among `recipes` that a note in words only repeats ("resampled by day",
    "resampled by month, mean"): every word of it is a period or an aggregate, and they are the
    recipe's own. A note that says anything else (another period, another aggregate, a word the
    vocabulary does not know) restates nothing."""
    tokens = re.findall(r"[a-z]+", note.casefold())
    if not tokens or any(t not in _NOTE_WORDS | _FILLERS and t not in _FREQ_OF and t not in _AGG_WORDS
                         for t in tokens):
        return []
    freqs = {_FREQ_OF[t] for t in tokens if t in _FREQ_OF}
    hows = {_AGG_WORDS[t] for t in tokens if t in _AGG_WORDS}
    if len(freqs) > 1 or len(hows) > 1 or not freqs | hows:
        return []
    return [r for r in recipes if isinstance(r, Resample) and freqs <= {r.freq} and hows <= {r.how}]


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
        for candidate in (text, re.sub(r"^(?:daily|hourly|weekly|monthly|quarterly|yearly|annual|raw|observed|"
                                       r"measured) ", "", text)):
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
        if not first and (restated := _restates(b, second)):
            return restated  # "daily mean of temp (resampled by day)": the note says the recipe again
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
