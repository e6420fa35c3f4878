"""Building blocks of statistics questions, injected into every template like the item helpers.

A small model that computes a statistic by hand gets the window, the alignment of dates and
values, the label or the unit wrong. A block does that part: `take_window` cuts one channel of
one record (values and their dates from the same rows, the channel's unit from `handler.units`
when the handler declares it), and each statistic block returns a `BlockResult` whose value,
day, shown series and rationale all come from that same window, so a template that composes
them has its key, labels and alignment right by construction. A block returns None where the
record does not fit (too short, missing values in the window, a tie): `continue` and draw again.
Blocks read only what templates already see (`handler.series(record_id)`); free code stays
possible on `window.values` / `window.dates`. The reasoning blocks (`items.reasoning_blocks`: a trend,
a seasonal peak, an unusual day, a level shift, comparisons, correlation, lead, volatility, the most
alike window) return a `Choice`, which `ask` turns into an item the same way.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.items.block_calls import call_metadata, replayable
from itemsmith.items.helpers import mc_item, numeric_options, series
from itemsmith.items.reasoning_blocks import REASONING_BLOCKS, Choice, canonical

MAX_DECIMALS = 3
STATISTICS: dict[str, Callable[[np.ndarray], float]] = {
    "max": lambda v: float(v.max()),
    "min": lambda v: float(v.min()),
    "mean": lambda v: float(v.mean()),
    "median": lambda v: float(np.median(v)),
    "sum": lambda v: float(v.sum()),
    "range": lambda v: float(v.max() - v.min()),
    "std": lambda v: float(v.std()),
}
WORDS = {"max": "maximum", "min": "minimum", "mean": "mean", "median": "median", "sum": "sum",
         "range": "range (maximum minus minimum)", "std": "standard deviation"}
SUMMARIES = ("mean", "median", "std")  # a statistic of many values: one decimal more than the data's
# the other words a model writes for a statistic (lower case, "_" for spaces and hyphens), each exactly that
# statistic: "higher" (on average) and "more_variable" (the larger standard deviation) are `compare`'s words,
# which a model also passes to compare_windows; "variance" is no standard deviation and is not here
STATISTIC_WORDS = {"average": "mean", "avg": "mean", "higher": "mean", "maximum": "max", "highest": "max",
                   "minimum": "min", "lowest": "min", "total": "sum", "standard_deviation": "std", "stdev": "std",
                   "stddev": "std", "sd": "std", "more_variable": "std", "most_variable": "std"}


# what a block says to a call that means `compare` (several windows, or a comparison no statistic is)
ASKS_COMPARE = ('to ask which of several windows is higher, more variable or trends more, call compare(win, '
                'take_windows(handler, win, 3), "higher"|"more_variable"|"trends_more")')


def statistic(block: str, how: str) -> str:
    """The `STATISTICS` name `how` stands for (itself, or a word of `STATISTIC_WORDS`); a ValueError that
    lists both, and the call a comparison of several windows needs, when it stands for none."""
    name = canonical(how, STATISTIC_WORDS)
    if name not in STATISTICS:
        raise ValueError(f"{block}: how must be one of {', '.join(STATISTICS)} (or {', '.join(STATISTIC_WORDS)}), got "
                         f"{how!r}; {ASKS_COMPARE}")
    return name


@dataclass(frozen=True, eq=False)
class Window:
    """`values[i]` was measured at `dates[i]`: rows `start` to `end - 1` of one channel of one record."""

    record_id: Any
    channel: str
    unit: str  # "" when the handler declares none
    values: np.ndarray  # read-only floats
    dates: list[str]
    start: int
    end: int
    first: str
    last: str
    about: str  # "temp_max (°C) of record 2012-03 from 2012-03-04 to 2012-03-26", for question text
    shown: dict[str, Any] = field(repr=False)  # series(...) of exactly these values and dates
    record: np.ndarray = field(repr=False)  # the whole channel of the record (read-only): values == record[start:end]


@dataclass(frozen=True, eq=False)
class BlockResult:
    """What a block computed, from one window (or two for a comparison).

    `value`: the number (or date text for `first_day`); `day`: the date of an extreme or of the
    event; `label`: the categorical answer of a comparison; `spread` and `decimals`: what
    `numeric_options` needs; `shown`: the list for `series=`; `rationale`: how it was computed;
    `question`: a question whose answer is exactly `value` (`ask` makes the item from it).
    """

    value: Any
    how: str
    question: str
    unit: str
    spread: float
    decimals: int
    rationale: str
    shown: list[dict[str, Any]]
    window: Window
    day: str | None = None
    label: str | None = None
    other: Window | None = None  # the second window of a comparison
    # the same statistic of other values of the window's length (`ask` draws distractors with it)
    recompute: Callable[[np.ndarray], float] | None = field(default=None, repr=False)
    # the block call that made it, as plain JSON (`block_calls.BlockCall`): set by `replayable`
    call: dict[str, Any] | None = field(default=None, repr=False)


def handler_units(handler: Any) -> Mapping[str, str]:
    """The handler's `units` ({column: unit}) if it declares them (attribute or method), else {}."""
    units = getattr(handler, "units", None)
    if callable(units):
        units = units()
    return units if isinstance(units, Mapping) else {}


def date_labels(index: pd.Index) -> list[str]:
    """The index as text: days for a daily datetime index, minutes (seconds where needed) otherwise."""
    if isinstance(index, pd.DatetimeIndex):
        # numpy, not DatetimeIndex.normalize/strftime: those infer the index's frequency on every
        # call, and a template cuts thousands of windows a run
        stamps = (index.tz_localize(None) if index.tz is not None else index).to_numpy()
        seconds = stamps.astype("datetime64[s]")
        if len(stamps) and (stamps == stamps.astype("datetime64[D]")).all():
            return np.datetime_as_string(stamps, unit="D").tolist()
        whole_minutes = (seconds == seconds.astype("datetime64[m]")).all()
        labels = np.datetime_as_string(seconds, unit="m") if whole_minutes else np.datetime_as_string(seconds, unit="s")
        return [f"{label[:10]} {label[11:]}" if len(label) > 10 else label for label in labels.tolist()]  # NaT as is
    return [str(label) for label in index]


def data_decimals(values: np.ndarray) -> int:
    """How many decimals the data is written with (at most MAX_DECIMALS)."""
    for decimals in range(MAX_DECIMALS):
        if np.allclose(values, np.round(values, decimals), rtol=0, atol=1e-9):
            return decimals
    return MAX_DECIMALS


def _number(value: float, decimals: int, unit: str) -> str:
    suffix = "" if not unit else (unit if unit[0] in "%°'\"" else " " + unit)
    return f"{round(float(value), decimals) + 0.0:.{decimals}f}{suffix}"  # + 0.0: never "-0.0"


def window_of(record_id: Any, channel: str, unit: str, record: np.ndarray, dates: list[str], start: int,
              end: int) -> Window:
    """Rows `start` to `end - 1` of `record` (one channel of one record) and `dates` (the record's, as
    `date_labels` writes them): as `take_window` cuts it, and as a trusted replay rebuilds it."""
    record = np.array(record, dtype=float)
    record.setflags(write=False)
    values, dates = record[start:end], dates[start:end]
    unit_text = f" ({unit})" if unit else ""
    about = f"{channel}{unit_text} of record {record_id} from {dates[0]} to {dates[-1]}"
    shown = series(values.tolist(), name=channel, timestamps=dates, unit=unit or None)
    return Window(record_id=record_id, channel=channel, unit=unit, values=values, dates=list(dates), start=start,
                  end=end, first=dates[0], last=dates[-1], about=about, shown=shown, record=record)


def example_window(values: np.ndarray, *, channel: str, unit: str = "") -> Window:
    """A window over `values`, dated one day apart, of no real record: for trying a block call
    on a channel's range without a handler."""
    dates = [str(day.date()) for day in pd.date_range("2000-01-01", periods=len(values), freq="D")]
    return window_of("example", channel, unit, values, dates, 0, len(values))


DRAWN = "t"  # in a written block call, a threshold each item draws from its record (`draw_threshold`)


class _Drawn:
    """Where a written call passes DRAWN (the name, not the text "t")."""

    def __repr__(self) -> str:
        return DRAWN


_DRAWN = _Drawn()


@dataclass(frozen=True)
class WrittenCall:
    """A window block's call as a text (a planner's brief) writes it."""

    name: str
    text: str  # from the block's name to its closing parenthesis
    on_win: bool = False  # the window argument is the name `win` (the skeleton's variable)
    # the arguments after the window, literals or the name DRAWN; None: another name is one
    args: tuple[Any, ...] | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)  # the keyword ones, when `args` is not None
    error: str | None = None  # why the text is no Python call

    @property
    def literal(self) -> bool:
        """Every argument after the window is a literal or the drawn threshold."""
        return self.error is None and self.args is not None

    @property
    def draws(self) -> bool:
        """A threshold argument is DRAWN: each item draws its own."""
        return self.literal and any(a is _DRAWN for a in (*(self.args or ()), *self.kwargs.values()))

    def arguments(self, drawn: float) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments after the window, with `drawn` where a threshold is DRAWN."""
        if self.args is None:
            raise ValueError(f"{self.text} has arguments that are no literals")
        return (tuple(drawn if a is _DRAWN else a for a in self.args),
                {k: drawn if v is _DRAWN else v for k, v in self.kwargs.items()})


def written_calls(text: str) -> list[WrittenCall]:
    """Each call of a `WINDOW_BLOCKS` block in `text`, parsed, never run."""
    calls = []
    for match in re.finditer(rf"\b({'|'.join(WINDOW_BLOCKS)})\s*\(", text):
        depth, end = 0, len(text) - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        calls.append(_parsed(match.group(1), text[match.start():end + 1]))
    return calls


def _parsed(name: str, text: str) -> WrittenCall:
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError) as exc:
        return WrittenCall(name, text, error=f"it is not Python ({exc.msg if isinstance(exc, SyntaxError) else 'too deep'})")
    if not isinstance(node, ast.Call) or not node.args:
        return WrittenCall(name, text, error="it passes no window")
    on_win = isinstance(node.args[0], ast.Name) and node.args[0].id == "win"

    def value(arg: ast.expr) -> Any:
        return _DRAWN if isinstance(arg, ast.Name) and arg.id == DRAWN else ast.literal_eval(arg)

    try:
        return WrittenCall(name, text, on_win, tuple(value(a) for a in node.args[1:]),
                           {k.arg: value(k.value) for k in node.keywords if k.arg is not None})
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return WrittenCall(name, text, on_win)


def _window_blocks() -> dict[str, Callable[..., Any]]:
    """The blocks that compute from one window and literal arguments (not a handler, not two windows,
    nothing drawn)."""
    found = {}
    for name, fn in BLOCKS.items():
        if name in RANDOM_BLOCKS:
            continue
        annotations = [str(p.annotation) for p in inspect.signature(fn).parameters.values()]
        if annotations and annotations[0] == "Window" and annotations.count("Window") == 1:
            found[name] = fn
    return found


def _column(handler: Any, record_id: Any, channel: str) -> tuple[np.ndarray, list[str]] | None:
    frame = handler.series(record_id)
    if channel not in frame.columns:
        return None
    values = pd.to_numeric(frame[channel], errors="coerce").to_numpy(dtype=float)
    return values, date_labels(frame.index)


def take_window(handler: Any, record_id: Any, channel: str, *, rng: np.random.Generator, start: int | None = None,
                length: int | None = None, min_length: int = 10, max_length: int = 60) -> Window | None:
    """One channel of one record over consecutive rows, with their dates.

    Without `start`/`length` the window is drawn at random (`min_length` to `max_length` rows, and
    never the whole record when a shorter window fits: `ask` draws a statistic's distractors from
    the record's other windows, and a whole record has none); `length` alone: a random start;
    `start` alone: to the end of the record. None when the record lacks the channel, is too short,
    or has a missing value inside the window.
    """
    column = _column(handler, record_id, channel)
    if column is None:
        return None
    values, dates = column
    n = len(values)
    if length is None:
        if start is not None:
            length = n - start
        else:
            if n < min_length:
                return None
            longest = n - 1 if n > min_length else n
            length = int(rng.integers(min_length, min(max_length, longest) + 1))
    if start is None:
        if length > n:
            return None
        start = int(rng.integers(0, n - length + 1))
    start, length = int(start), int(length)
    end = start + length
    if start < 0 or length < 1 or end > n or not np.isfinite(values[start:end]).all():
        return None
    unit = str(handler_units(handler).get(channel, "") or "")
    return window_of(record_id, channel, unit, values, dates, start, end)


def align_window(handler: Any, window: Window, channel: str) -> Window | None:
    """Another channel of the same record over the same rows (same dates); None when it is missing there."""
    column = _column(handler, window.record_id, channel)
    if column is None:
        return None
    values, dates = column
    if dates[window.start:window.end] != window.dates or not np.isfinite(values[window.start:window.end]).all():
        return None
    unit = str(handler_units(handler).get(channel, "") or "")
    return window_of(window.record_id, channel, unit, values, dates, window.start, window.end)


def take_windows(handler: Any, window: Window, n: int = 3, *, rng: np.random.Generator) -> list[Window]:
    """`n` windows of the same channel and length as `window` from other records (each drawn as
    `take_window` draws a start; records that do not fit are skipped): fewer when too few fit."""
    ids = [rid for rid in handler.records()["record_id"].tolist() if rid != window.record_id]
    found: list[Window] = []
    for index in rng.permutation(len(ids)):
        other = take_window(handler, ids[int(index)], window.channel, rng=rng, length=len(window.values))
        if other is not None:
            found.append(other)
        if len(found) == n:
            break
    return found


def _spread(window: Window) -> float:
    """A typical gap between neighbouring options for a statistic of this window."""
    return max(float(window.values.std()) / 2, 10.0 ** -data_decimals(window.values))


@replayable
def channel_stat(window: Window, how: str) -> BlockResult | None:
    """`how` in max, min, mean, median, sum, range, std of the window (or a word for one of them:
    `STATISTIC_WORDS`). For max and min, `day` is its date; None when the extreme occurs on more than
    one day (a question about its day would be ambiguous)."""
    how = statistic("channel_stat", how)
    values = window.values
    value = STATISTICS[how](values)
    decimals = min(data_decimals(values) + (how in SUMMARIES), MAX_DECIMALS)
    day = None
    if how in ("max", "min"):
        hits = np.flatnonzero(values == value)
        if len(hits) > 1:
            return None
        day = window.dates[int(hits[0])]
    on_day = f", on {day}" if day else ""
    rationale = (f"The {WORDS[how]} of the {len(values)} {window.about} is "
                 f"{_number(value, decimals, window.unit)}{on_day}.")
    spread = _spread(window) if how != "sum" else max(_spread(window) * np.sqrt(len(values)), 1.0)
    question = f"What is the {WORDS[how]}{' value' if how in ('max', 'min') else ''} of the {window.about}?"
    return BlockResult(value=value, how=how, question=question, unit=window.unit, spread=float(spread),
                       decimals=decimals, rationale=rationale, shown=[dict(window.shown)], window=window, day=day,
                       recompute=STATISTICS[how])


def _passing(block: str, window: Window, above: float | None, below: float | None
             ) -> tuple[Callable[[np.ndarray], np.ndarray], str, str]:
    """Which values pass a threshold (strictly above `above` or strictly below `below`; exactly one
    given), the side's word and the threshold as the question writes it. The threshold is rounded
    to the decimals the question prints (at most MAX_DECIMALS) before anything is counted: a reader
    counts against the printed number, so the key must too."""
    if (above is None) == (below is None):
        raise ValueError(f"{block} needs exactly one of above= or below=")
    decimals = data_decimals(np.array([float(above if above is not None else below)]))  # type: ignore[arg-type]
    threshold = round(float(above if above is not None else below), decimals)  # type: ignore[arg-type]
    limit = _number(threshold, decimals, window.unit)
    if above is not None:
        return (lambda values: values > threshold), "above", limit
    return (lambda values: values < threshold), "below", limit


@replayable
def count_beyond(window: Window, above: float | None = None, *, below: float | None = None) -> BlockResult:
    """How many values of the window are strictly above `above` (or strictly below `below`); give one."""
    passes, side, limit = _passing("count_beyond", window, above, below)
    value = int(passes(window.values).sum())
    rationale = f"{value} of the {len(window.values)} {window.about} are {side} {limit}."
    question = f"How many values of the {window.about} are {side} {limit}?"
    return BlockResult(value=value, how=f"count {side}", question=question, unit="",
                       spread=max(1.0, len(window.values) / 10), decimals=0, rationale=rationale,
                       shown=[dict(window.shown)], window=window,
                       recompute=lambda values: float(passes(values).sum()))


@replayable
def change_between(window: Window, first: int = 0, last: int = -1) -> BlockResult:
    """values[last] - values[first] (positions in the window; default: its first and last day)."""
    n = len(window.values)
    i, j = first % n, last % n
    value = float(window.values[j] - window.values[i])
    decimals = data_decimals(window.values)
    a, b = window.dates[i], window.dates[j]
    rationale = (f"The {window.channel} went from {_number(window.values[i], decimals, window.unit)} on {a} to "
                 f"{_number(window.values[j], decimals, window.unit)} on {b}: a change of "
                 f"{_number(value, decimals, window.unit)} (record {window.record_id}).")
    unit = f" ({window.unit})" if window.unit else ""
    question = (f"By how much did the {window.channel}{unit} of record {window.record_id} change from {a} to {b} "
                "(the later value minus the earlier)?")
    return BlockResult(value=value, how="change", question=question, unit=window.unit, spread=_spread(window),
                       decimals=decimals, rationale=rationale, shown=[dict(window.shown)], window=window, day=b,
                       recompute=lambda values: float(values[j] - values[i]))


@replayable
def first_day(window: Window, above: float | None = None, *, below: float | None = None) -> BlockResult | None:
    """The first date in the window whose value is strictly above `above` (or below `below`); None
    when no day is. `value` and `day` are that date."""
    passes, side, limit = _passing("first_day", window, above, below)
    hits = np.flatnonzero(passes(window.values))
    if len(hits) == 0:
        return None
    i = int(hits[0])
    decimals = data_decimals(window.values)
    rationale = (f"In the {window.about}, the first value {side} {limit} is "
                 f"{_number(window.values[i], decimals, window.unit)}, on {window.dates[i]}.")
    question = f"In the {window.about}, on which date is the value {side} {limit} for the first time?"
    return BlockResult(value=window.dates[i], how=f"first {side}", question=question, unit="", spread=0.0,
                       decimals=0, rationale=rationale, shown=[dict(window.shown)], window=window,
                       day=window.dates[i])


def draw_threshold(window: Window, *, rng: np.random.Generator) -> float:
    """A value of the window's record (one of its days, missing ones left out), drawn at random: a
    threshold for count_beyond / first_day that each item draws anew. Some of the record's values
    pass it and others do not, whatever the season; a fixed threshold leaves most windows of a
    seasonal channel all above or all below it, so few windows make items and they keep coming back.
    Rounded to the decimals a question prints it with (at most MAX_DECIMALS): the threshold a
    template holds is the one the question states and the one counted against."""
    values = window.record[np.isfinite(window.record)]
    value = float(values[int(rng.integers(len(values)))])
    return round(value, data_decimals(np.array([value])))


def _name(window: Window, other: Window) -> str:
    """What tells two windows apart in an answer: the channel, the record, or the dates."""
    if window.channel != other.channel:
        return window.channel
    if window.record_id != other.record_id:
        return str(window.record_id)
    return f"{window.first} to {window.last}"


@replayable
def compare_windows(a: Window, b: Window, how: str = "mean") -> BlockResult | None:
    """The statistic `how` of `a` minus that of `b` (`value`), and which is larger (`label`: the
    channel, record or dates that tell them apart); None on a tie or when the statistic has one
    (an extreme reached twice). `how` as `channel_stat` takes it."""
    if not (isinstance(a, Window) and isinstance(b, Window)):
        raise ValueError(f"compare_windows subtracts a statistic of one window from another's, got a "
                         f"{type(b if isinstance(a, Window) else a).__name__}; {ASKS_COMPARE}")
    how = statistic("compare_windows", how)
    left, right = channel_stat(a, how), channel_stat(b, how)
    if left is None or right is None or left.value == right.value:
        return None
    label = _name(a, b) if left.value > right.value else _name(b, a)
    decimals = max(left.decimals, right.decimals)
    unit = a.unit if a.unit == b.unit else ""
    margin = _number(abs(left.value - right.value), decimals, unit)
    rationale = f"{left.rationale} {right.rationale} The larger is {label}, by {margin}."
    shown = [dict(a.shown)] + ([dict(b.shown)] if b.shown != a.shown else [])
    question = f"What is the {WORDS[how]} of the {a.about} minus the {WORDS[how]} of the {b.about}?"
    return BlockResult(value=left.value - right.value, how=f"compare {how}", question=question, unit=unit,
                       spread=max(left.spread, right.spread), decimals=decimals, rationale=rationale, shown=shown,
                       window=a, label=label, other=b)


def _other_dates(window: Window, at: int, rng: np.random.Generator, n: int = 4) -> tuple[str, list[str]]:
    """The date at `at` and n - 1 other dates of the window, the key's rank among them uniform: only a
    key with n - 1 dates on each side (any rank fits, so keys early in the window, as first days
    tend to be, do not make the earliest option the key)."""
    before, after = list(range(at)), list(range(at + 1, len(window.dates)))
    if min(len(before), len(after)) < n - 1:
        raise ValueError("the window has too few dates on one side of the key")
    rank = int(rng.integers(n))
    picked = [*rng.choice(before, size=rank, replace=False), *rng.choice(after, size=n - 1 - rank, replace=False)]
    return window.dates[at], [window.dates[int(i)] for i in picked]


def _other_windows(result: BlockResult, rng: np.random.Generator, n: int = 3) -> list[str] | None:
    """`n` distractors: the same statistic of `n` windows of the record of the key's length, each drawn
    as `take_window` draws one (a uniform start among those without a missing value; with
    replacement) and written like the key. None when the result has no such statistic or the window
    is the whole record; [] when two of the four options read alike (`ask` drops the item).

    Key and distractors are then four draws of one distribution, kept or dropped by a rule blind to
    which of them is the key, so given its options each is the key equally often: no solver that
    learns from the options alone (which values tend to be keys, their rank, the record's scale or
    season) beats chance, however few values the statistic takes (a count over a week takes eight).
    Redrawing only a distractor that reads like the key would break this: frequent values would be
    keys more often than they are distractors."""
    window = result.window
    length = len(window.values)
    if result.recompute is None or length == len(window.record):
        return None
    missing = np.concatenate([[0], np.cumsum(~np.isfinite(window.record))])
    starts = np.flatnonzero(missing[length:] - missing[:-length] == 0)
    texts = [_number(result.value, result.decimals, result.unit)]
    for start in rng.choice(starts, size=n):
        texts.append(_number(result.recompute(window.record[start:start + length]), result.decimals, result.unit))
    return texts[1:] if len(set(texts)) == len(texts) else []


def _ask_choice(result: Choice, rng: np.random.Generator, metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A reasoning block's item: its key and 3 other choices (the hardest ones when ranked); None
    with fewer."""
    others = [c for c in result.choices if c != result.value]
    if len(others) < 3:
        return None  # an item has 4 options (the audit's rule)
    if result.grid:  # room for every rank first, so that whether an item comes does not depend on it
        at, step = result.value_at, result.grid
        if at - 3 * step < 0 or at + 3 * step >= len(result.choices):
            return None
        rank = int(rng.integers(4))
        wrong = [result.choices[at + (j - rank) * step] for j in range(4) if j != rank]
    elif result.ranked:
        wrong = others[:3]
    else:
        wrong = [others[int(i)] for i in rng.choice(len(others), size=3, replace=False)]
    windows = [w for w in (result.window, result.other, *result.extra) if w is not None]
    records = list(dict.fromkeys(w.record_id for w in windows))
    return mc_item(result.question, result.value, wrong, rng=rng, series=result.shown, rationale=result.rationale,
                   metadata={"record_ids": records, "block": result.how, "category": result.category,
                             "concept": result.concept, **(metadata or {}), **call_metadata(result)})


def ask(result: BlockResult | Choice | None, *, rng: np.random.Generator,
        metadata: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The multiple-choice item of a block's result: its `question`, the key and 3 distractors, its
    series, rationale and `record_ids`. Distractors of a statistic, a count or a change are the same
    computation on other windows of the record (`_other_windows`); for a window that is the whole
    record, and for a comparison, they are drawn on the data's scale (`numeric_options`: the key's
    rank among them uniform; counts between 0 and the window's length); for a date, other dates of
    the window. None (`continue` and draw again) when `result` is None; when two options would read
    alike; when 3 distractors do not fit on both sides of the key (a count near 0 or near the
    window's length would otherwise be the smallest or the largest option); or when a first date is
    the window's first, which the question names."""
    if result is None:
        return None
    if isinstance(result, Choice):
        return _ask_choice(result, rng, metadata)
    window = result.window
    other = _other_windows(result, rng)
    if other == [] or (result.how.startswith("first") and result.value == window.first):
        return None  # options that read alike; or the first date, which the question names
    try:
        if result.how.startswith("first"):
            key, wrong = _other_dates(window, window.dates.index(result.value), rng)
        elif other is not None:
            key, wrong = _number(result.value, result.decimals, result.unit), other
        else:
            count = result.how.startswith("count")
            room = 3 * max(1, round(result.spread))
            if count and not room <= result.value <= len(window.values) - room:
                return None
            key, wrong = numeric_options(result.value, rng=rng, spread=result.spread, decimals=result.decimals,
                                         unit=result.unit, low=0 if count else None,
                                         high=len(window.values) if count else None)
    except ValueError:
        return None
    records = list(dict.fromkeys([w.record_id for w in (window, result.other) if w is not None]))
    return mc_item(result.question, key, wrong, rng=rng, series=result.shown, rationale=result.rationale,
                   metadata={"record_ids": records, **(metadata or {}), **call_metadata(result)})


BLOCKS: dict[str, Callable[..., Any]] = {
    "take_window": take_window,
    "align_window": align_window,
    "channel_stat": channel_stat,
    "count_beyond": count_beyond,
    "change_between": change_between,
    "first_day": first_day,
    "draw_threshold": draw_threshold,
    "compare_windows": compare_windows,
    "ask": ask,
    "take_windows": take_windows,
    **REASONING_BLOCKS,
}
RANDOM_BLOCKS = frozenset({"take_window", "draw_threshold", "ask", "take_windows"})
WINDOW_BLOCKS = _window_blocks()


def _asked(result: BlockResult | Choice) -> tuple[Any, ...]:
    """What a result's key is computed from: its windows, its statistic and its value."""
    windows = (w for w in (result.window, result.other) if w is not None)
    return result.how, repr(result.value), *((w.record_id, w.channel, w.start, w.end) for w in windows)


KEY_PATIENCE = 20  # results a run passes over while waiting for a key that is behind, before it takes any


@dataclass
class _KeyBalance:
    """The keys a run has asked of one reasoning block over one set of choices (trend's four words,
    the twelve months), so that each key it has met comes about as often: a result whose key is
    ahead of the least asked one it has met is passed over (the template draws another window),
    for at most `KEY_PATIENCE` results in a row. Keys as often as the data makes them would be a
    prior a solver learns without the data (a falling season's "falls strongly" in 3 items of 4);
    drawing the windows for the key instead keeps each item's key computed from its data."""

    met: dict[str, int] = field(default_factory=dict)  # each key met in a result -> items asked with it
    passed_over: int = 0

    def takes(self, key: str) -> bool:
        self.met.setdefault(key, 0)
        if self.met[key] > min(self.met.values()) and self.passed_over < KEY_PATIENCE:
            self.passed_over += 1
            return False
        self.passed_over = 0
        return True

    def asked(self, key: str) -> None:
        self.met[key] += 1


def _ask_once(rng: np.random.Generator) -> Callable[..., dict[str, Any] | None]:
    """`ask` as a run's template sees it: a result asked again gets None, whatever its first outcome.
    Asking one result until an item comes would keep its key and redraw only its distractors, and
    frequent values would again be keys more often than distractors (`_other_windows`). A reasoning
    block's result whose key the run has asked more often than another it met gets None too
    (`_KeyBalance`)."""
    asked: set[tuple[Any, ...]] = set()
    balances: dict[tuple[str, frozenset[str]], _KeyBalance] = {}

    def ask_once(result: BlockResult | Choice | None, *, metadata: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        if result is None:
            return None
        key = _asked(result)
        if key in asked:
            return None
        asked.add(key)
        if not isinstance(result, Choice):
            return ask(result, rng=rng, metadata=metadata)
        balance = balances.setdefault((result.how, frozenset(result.answers or result.choices)), _KeyBalance())
        if not balance.takes(result.value):
            return None
        item = ask(result, rng=rng, metadata=metadata)
        if item is not None:
            balance.asked(result.value)
        return item

    ask_once.__name__ = "ask"
    ask_once.__doc__ = (f"{ask.__doc__} A result asked again in the same run gets None, and so does a reasoning "
                        "block's result whose key the run has asked more often than another it met.")
    return ask_once


def bind_blocks(rng: np.random.Generator) -> dict[str, Callable[..., Any]]:
    """The block names a template sees: the random ones bound to the run's generator, `ask` once per
    result (`_ask_once`)."""
    bound = {name: functools.partial(fn, rng=rng) if name in RANDOM_BLOCKS else fn for name, fn in BLOCKS.items()}
    return {**bound, "ask": _ask_once(rng)}
