"""Item-building helpers injected into every template.

Templates call them without `rng`: the runner binds each to the run's seeded
generator (`bind_helpers`), so the correct option's position is uniform and the
same seed gives the same items. `numeric_options` and `date_options` build the
options of a numeric or date question so that nothing but the data tells the key
apart: its rank among the sorted options is uniform and every option is formatted
the same way.
"""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from itemsmith.items.schema import MAX_OPTIONS


def series(values: Sequence[float], name: str = "series", timestamps: Sequence[Any] | None = None,
           unit: str | None = None, derived: str | None = None) -> dict[str, Any]:
    """One named channel for an item's `series` list (values become plain floats); a channel that
    is not a stretch of one handler column as it is says how it was made: derived="7-day mean of
    temp_max".

    Readers and judges see `derived`; the audit checks every other channel against the handler's
    data (a rolling mean, a percentage change, a unit conversion or a sum of columns must say so)."""
    channel: dict[str, Any] = {"name": str(name), "values": [float(v) for v in values]}
    if timestamps is not None:
        channel["timestamps"] = [str(t) for t in timestamps]
    if unit is not None:
        channel["unit"] = str(unit)
    if derived is not None:
        channel["derived"] = str(derived)
    return channel


def _item(kind: str, question: str, options: list[str], answer_index: int, series_list: Any,
          context: str | None, rationale: str | None, metadata: dict[str, Any] | None) -> dict[str, Any]:
    if series_list is not None and not isinstance(series_list, list | tuple):  # one channel is a dict: list(it) = keys
        raise TypeError(f"series= takes a list of channels, e.g. series=[series(values, name=...)], not a "
                        f"{type(series_list).__name__}")
    item: dict[str, Any] = {"kind": kind, "question": question, "options": options,
                            "answer_index": int(answer_index), "series": list(series_list or [])}
    if context is not None:
        item["context"] = context
    if rationale is not None:
        item["rationale"] = rationale
    if metadata:
        item["metadata"] = dict(metadata)
    return item


def mc_item(question: str, correct: Any, distractors: Sequence[Any], *, rng: np.random.Generator,
            series: Any = None, context: str | None = None, rationale: str | None = None,
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A multiple-choice item: the correct option plus 1 to 5 distractors, shuffled by `rng`."""
    options = [str(correct)] + [str(d) for d in distractors]
    if not 2 <= len(options) <= MAX_OPTIONS:
        raise ValueError(f"mc_item needs 1 to {MAX_OPTIONS - 1} distractors, got {len(options) - 1}")
    if len(set(options)) != len(options):
        raise ValueError(f"mc_item options must be distinct, got {options}")
    order = rng.permutation(len(options))
    shuffled = [options[i] for i in order]
    return _item("mc", question, shuffled, int(np.flatnonzero(order == 0)[0]), series, context,
                 rationale, metadata)


def tf_item(statement: str, is_true: bool, *, rng: np.random.Generator | None = None,
            series: Any = None, context: str | None = None, rationale: str | None = None,
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A true/false item; options are always ("True", "False")."""
    del rng  # accepted so every helper binds the same way
    return _item("tf", statement, ["True", "False"], 0 if bool(is_true) else 1, series, context,
                 rationale, metadata)


def pz_item(question: str, first: Sequence[float], segments: Sequence[Sequence[float]], *,
            rng: np.random.Generator, n_options: int = 4, context: str | None = None,
            rationale: str | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A puzzle item (TSAQA): `first` is shown, `segments` (in their true order) are shuffled
    and labelled S1..Sk; the options are orderings of those labels."""
    k = len(segments)
    if k < 2:
        raise ValueError("pz_item needs at least 2 segments to order")
    n_options = min(n_options, MAX_OPTIONS, math.factorial(k))
    if n_options < 2:
        raise ValueError("pz_item needs n_options >= 2")
    shown = rng.permutation(k)  # shown[j] = true position of the segment labelled S{j+1}
    label_of = {int(true_pos): f"S{j + 1}" for j, true_pos in enumerate(shown)}
    correct = tuple(label_of[p] for p in range(k))
    wrong: list[tuple[str, ...]] = []
    labels = [f"S{j + 1}" for j in range(k)]
    candidates = list(itertools.permutations(labels)) if k <= 6 else None
    while len(wrong) < n_options - 1:
        if candidates is not None:
            perm = candidates[int(rng.integers(len(candidates)))]
        else:
            perm = tuple(labels[i] for i in rng.permutation(k))
        if perm != correct and perm not in wrong:
            wrong.append(perm)
    channels = [series(first, name="given")]
    channels += [series(segments[int(true_pos)], name=f"S{j + 1}") for j, true_pos in enumerate(shown)]
    item = mc_item(question, " -> ".join(correct), [" -> ".join(w) for w in wrong], rng=rng,
                   series=channels, context=context, rationale=rationale, metadata=metadata)
    item["kind"] = "pz"
    return item


def _spread_steps(rng: np.random.Generator, count: int, spread_steps: float, room: float) -> list[int]:
    """`count` positive gaps (in rounding steps) around `spread_steps` each, summing to at most `room`."""
    gaps = [max(1, int(round(spread_steps * float(rng.uniform(0.5, 1.5))))) for _ in range(count)]
    total = sum(gaps)
    if total > room:
        scale = (room - count) / max(total - count, 1)
        gaps = [1 + int((g - 1) * scale) for g in gaps]
    return gaps


def _place(rng: np.random.Generator, key: int, n: int, spread: float, low: float, high: float) -> list[int]:
    """n distinct integers (rounding steps) including `key`, whose rank among them is uniform
    (never narrowed by the bounds: that would tell the key apart); gaps between neighbours vary
    around `spread` and shrink where a bound is near."""
    below_room, above_room = key - low, high - key
    rank = int(rng.integers(n))
    if rank > below_room or n - 1 - rank > above_room:
        raise ValueError(f"the correct value is too close to low/high for {n} distinct options at a random rank; "
                         "skip this item (continue) or widen the bounds")
    below = _spread_steps(rng, rank, spread, below_room)
    above = _spread_steps(rng, n - 1 - rank, spread, above_room)
    lower = list(itertools.accumulate(below))
    upper = list(itertools.accumulate(above))
    return [key - d for d in lower] + [key] + [key + d for d in upper]


def numeric_options(correct: float, *, rng: np.random.Generator, spread: float | None = None, n: int = 4,
                    decimals: int | None = None, unit: str = "", low: float | None = None,
                    high: float | None = None, step: float | None = None) -> tuple[str, list[str]]:
    """Options for a numeric answer: `(key_text, distractor_texts)` for mc_item.

    The key's rank among the n sorted values is uniform (it is not always the middle one),
    neighbouring options are about `spread` apart (unevenly), and every option is rounded to
    `decimals` and written with the same `unit`, so format gives nothing away. `low`/`high`
    bound every option (e.g. low=0 for counts); a key too close to a bound for the drawn rank
    raises ValueError (catch it and `continue`: narrowing the rank would give the key away). Data
    that moves in fixed steps (whole counts, Fahrenheit read in Celsius: steps of 5/9) puts keys
    such as a range on those steps: pass `step` and the distractors are the key plus whole
    multiples of it, else only the key would lie on the data's grid. Example:
    `key, wrong = numeric_options(mean_temp, spread=1.5, decimals=1, unit="°C")`, then
    `mc_item(question, key, wrong, series=[...])`.
    """
    if not 2 <= n <= MAX_OPTIONS:
        raise ValueError(f"numeric_options needs 2 <= n <= {MAX_OPTIONS}, got {n}")
    value = float(correct)
    if not math.isfinite(value):
        raise ValueError(f"numeric_options needs a finite correct value, got {correct!r}")
    if decimals is None:
        decimals = 0 if isinstance(correct, (int, np.integer)) or value.is_integer() else 1
    resolution = 10.0 ** -decimals
    if spread is None:
        spread = max(abs(value) * 0.15, 2 * resolution)
    if spread <= 0 or (step is not None and not step > 0):
        raise ValueError("numeric_options needs spread > 0 and step > 0")
    # options are origin + k * grid for whole k: the rounding grid, or the key plus multiples of `step`
    origin, grid, key = (value, float(step), 0) if step is not None else (0.0, resolution, int(round(value / resolution)))
    lo = -math.inf if low is None else math.ceil((low - origin) / grid - 1e-9)
    hi = math.inf if high is None else math.floor((high - origin) / grid + 1e-9)
    if not lo <= key <= hi:
        raise ValueError(f"the correct value {value} lies outside [low, high]")
    steps = _place(rng, key, n, max(spread / grid, 1.0), lo, hi)
    suffix = "" if not unit else (unit if unit[0] in "%°'\"" else " " + unit)

    def text(k: int) -> str:
        return f"{origin + k * grid:.{decimals}f}{suffix}"

    texts = {k: text(k) for k in steps}
    if len(set(texts.values())) < len(texts):
        raise ValueError(f"numeric_options: step {step} is finer than {decimals} decimals can write; use more decimals")
    return texts[key], [t for k, t in texts.items() if k != key]


def _as_datetime(value: Any) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, np.datetime64):
        return _dt.datetime.fromisoformat(str(value.astype("datetime64[s]")))
    if isinstance(value, str):
        return _dt.datetime.fromisoformat(value.strip().replace("Z", ""))
    to_pydatetime = getattr(value, "to_pydatetime", None)  # pandas Timestamp
    if callable(to_pydatetime):
        return _as_datetime(to_pydatetime())
    raise TypeError(f"date_options needs a date, datetime, ISO string or Timestamp, got {type(value).__name__}")


def date_options(correct: Any, *, rng: np.random.Generator, spread_days: float = 7, n: int = 4,
                 low: Any = None, high: Any = None, fmt: str = "%Y-%m-%d",
                 step: _dt.timedelta = _dt.timedelta(days=1)) -> tuple[str, list[str]]:
    """Options for a date answer: `(key_text, distractor_texts)` for mc_item.

    Like numeric_options: the key's rank among the sorted dates is uniform, neighbouring
    dates are about `spread_days` apart (unevenly), all are written with `fmt`. Pass the series'
    first and last timestamps as `low`/`high` so no option falls outside the data (a key too close
    to them raises ValueError: catch it and `continue`). Example:
    `key, wrong = date_options(peak_day, spread_days=10, low=dates[0], high=dates[-1])`.
    """
    if not 2 <= n <= MAX_OPTIONS:
        raise ValueError(f"date_options needs 2 <= n <= {MAX_OPTIONS}, got {n}")
    if step <= _dt.timedelta(0) or spread_days <= 0:
        raise ValueError("date_options needs spread_days > 0 and a positive step")
    origin = _as_datetime(correct)
    lo = -math.inf if low is None else math.ceil((_as_datetime(low) - origin) / step - 1e-9)
    hi = math.inf if high is None else math.floor((_as_datetime(high) - origin) / step + 1e-9)
    if not lo <= 0 <= hi:
        raise ValueError("the correct date lies outside [low, high]")
    spread = max(_dt.timedelta(days=spread_days) / step, 1.0)
    offsets = _place(rng, 0, n, spread, lo, hi)
    texts = [(origin + k * step).strftime(fmt) for k in offsets]
    if len(set(texts)) != len(texts):
        raise ValueError(f"date_options: fmt {fmt!r} writes different dates the same way; use a finer fmt or step")
    return origin.strftime(fmt), [t for k, t in zip(offsets, texts, strict=True) if k != 0]


_HOW = {"mean": "mean", "average": "mean", "sum": "total", "total": "total", "min": "min", "max": "max",
        "median": "median", "std": "std", "first": "first", "last": "last", "count": "count"}
_PERIOD = {"hour": "hourly", "h": "hourly", "day": "daily", "d": "daily", "week": "weekly", "w": "weekly",
           "month": "monthly", "m": "monthly", "ms": "monthly", "me": "monthly", "quarter": "quarterly",
           "q": "quarterly", "year": "yearly", "y": "yearly", "a": "yearly", "ys": "yearly", "ye": "yearly"}
_STEP_UNITS = ("point", "day", "hour", "minute", "week", "month", "year", "trading day")


def _checked(value: str, choices: dict[str, str] | tuple[str, ...], what: str) -> str:
    key = str(value).strip().lower()
    if key not in choices:
        raise ValueError(f"{what} must be one of {sorted(set(choices))}, got {value!r}")
    return choices[key] if isinstance(choices, dict) else key


def _window(n: Any, unit: str) -> str:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"a window is a whole number of {unit}s, at least 1; got {n!r}")
    return f"{int(n)}-{_checked(unit, _STEP_UNITS, 'unit')}"


class RecipeWriter:
    """Writes a `derived=` text the item audit reads and recomputes on the named records (its
    vocabulary, docs/authoring.md). Each returns a string; the column may be another recipe
    (`recipe.rolling(recipe.convert("temp_max", "degF"), "mean", 7)`). In templates: `recipe.rolling(...)`."""

    @staticmethod
    def rolling(column: str, how: str, window: int, unit: str = "day", centred: bool = False) -> str:
        """A rolling statistic over `window` rows (unit "point") or time: "7-day rolling mean of temp_max".
        Trailing (pandas' default) unless `centred` (rolling(..., center=True))."""
        where = "centred " if centred else "trailing "
        return f"{_window(window, unit)} {where}rolling {_checked(how, _HOW, 'how')} of {column}"

    @staticmethod
    def resample(column: str, period: str, how: str) -> str:
        """A calendar resample with an aggregate: "monthly total of precipitation" (period: hour, day,
        week, month, quarter or year, or a pandas alias such as "W", "MS")."""
        return f"{_checked(period, _PERIOD, 'period')} {_checked(how, _HOW, 'how')} of {column}"

    @staticmethod
    def change(column: str, periods: int = 1, unit: str = "point", kind: str = "difference") -> str:
        """The change over `periods` rows (unit "point", pandas' diff/pct_change) or time: kind
        "difference" (diff), "percent" (pct_change() * 100) or "log" (log return)."""
        what = {"difference": "change", "percent": "percentage change", "log": "log return"}
        return f"{_window(periods, unit)} {_checked(kind, what, 'kind')} of {column}"

    @staticmethod
    def zscore(column: str, window: int | None = None, unit: str = "day") -> str:
        """(x - mean) / std over the stretch shown (or the record), or over a rolling window."""
        return f"{_window(window, unit)} rolling z-score of {column}" if window is not None else f"z-score of {column}"

    @staticmethod
    def log(column: str, base: str = "e") -> str:
        """The natural log (base "e"), log10 (base "10") or log2 (base "2") of the values."""
        return f"{_checked(base, {'e': 'natural log', '10': 'log10', '2': 'log2'}, 'base')} of {column}"

    @staticmethod
    def convert(column: str, unit: str) -> str:
        """The values converted into another unit of the same quantity (the handler declares the
        column's): "temp_max in degF", "precipitation in inches"."""
        return f"{column} in {unit}"

    @staticmethod
    def combine(first: str, op: str, second: str) -> str:
        """Two columns row by row: op "+", "-", "*" or "/" ("temp_max - temp_min", "close / open")."""
        return f"{first} {_checked(op, ('+', '-', '*', '/'), 'op')} {second}"


recipe = RecipeWriter()


HELPERS: dict[str, Callable[..., Any]] = {
    "mc_item": mc_item,
    "tf_item": tf_item,
    "pz_item": pz_item,
    "numeric_options": numeric_options,
    "date_options": date_options,
}


def bind_helpers(rng: np.random.Generator) -> dict[str, Any]:
    """The helper names a template sees, each bound to the run's generator."""
    bound: dict[str, Any] = {name: functools.partial(fn, rng=rng) for name, fn in HELPERS.items()}
    bound["series"] = series
    bound["recipe"] = recipe
    return bound
