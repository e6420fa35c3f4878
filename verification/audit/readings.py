"""A recipe's readings on the named records, and a channel compared with one, point by point.

`readings(recipe, table)` computes every reading a recipe's text admits (`recipes`): a rolling window
trailing or centred unless the text says, in rows or in calendar time, with partial first windows
computed on the stretch shown; weeks from any weekday; periods labelled by either end, the first and
last partial when a slice was resampled; z-scores over the stretch shown or the record, ddof 0 or 1;
unit conversions with the factors in `units`. `compare(reading, values, stamps, tolerance)` matches a
channel with a reading (or with a column as it is) at its timestamps, in order (a subset of the rows
is fine), or as a stretch when the channel has no timestamps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.verification.audit.dates import Timeline, When
from itemsmith.verification.audit.recipes import (
    FREQ_WORDS,
    Change,
    Column,
    Combine,
    Constant,
    Convert,
    Log,
    Recipe,
    Resample,
    Rolling,
    ZScore,
)
from itemsmith.verification.audit.units import Unit, conversions, units_of

__all__ = ["Compared", "Reading", "Table", "Tolerance", "compare", "readings", "stamp_rows"]

_MAX_READINGS = 96
_UNIT_DAYS = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "month": 365.25 / 12, "year": 365.25}
_OPS: dict[str, Callable[[Any, Any], Any]] = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


@dataclass(frozen=True, eq=False)
class Table:
    """Columns over shared rows (the named records one after another, or one channel of the item)."""

    label: str
    columns: dict[str, np.ndarray]
    timeline: Timeline | None
    units: dict[str, Unit | None] = field(default_factory=dict)
    records: tuple[str, ...] = ()  # the record ids it holds


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
                               f"{FREQ_WORDS[recipe.freq]} {recipe.how}{f' ({where})' if where else ''}",
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
    if all(len(readings_) == 1 for readings_ in stamps):
        return timeline.rows_of_each([readings_[0] for readings_ in stamps])
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
