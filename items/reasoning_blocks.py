"""Reasoning blocks: questions about the shape of a series, answered right by construction.

The statistics blocks (`items.blocks`) read a number off a window; these ask what a reader
reasons about: which way and how strongly a channel trends, when in the season it peaks, which
day is unusual, when its level shifts, which of two channels is higher / more variable / trends
more, how two channels correlate, which one leads, where the series is most volatile, and which
of several windows is most alike a reference. Each block is a pure function of the windows it is
given and its parameters, and returns a `Choice`: the key, the options it is chosen among, the
question (in the window's channel, unit, record and dates), the rationale, the category and the
concept. Every block is registered as replayable
(`block_calls`): an item records its call, and a trusted replay re-derives its key from the handler's
rows. Every block has an unambiguity margin: where the statistic that decides the key lies
within the margin of a boundary (of another option, or of "no answer"), the block returns None
and the template draws again, so no item is keyed on a coin flip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from itemsmith.items.block_calls import replayable


class Window(Protocol):
    """What a reasoning block reads of a window (`items.blocks.Window`, which `take_window` cuts)."""

    @property
    def record_id(self) -> Any: ...
    @property
    def channel(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def values(self) -> np.ndarray: ...
    @property
    def dates(self) -> list[str]: ...
    @property
    def first(self) -> str: ...
    @property
    def last(self) -> str: ...
    @property
    def about(self) -> str: ...
    @property
    def shown(self) -> dict[str, Any]: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_THEIL_SEN = 3000  # a seasonal peak's trend is fitted to at most this many values
MAD_SCALE = 1.4826  # a normal sample's standard deviation per median absolute deviation


@dataclass(frozen=True, eq=False)
class Choice:
    """A reasoning block's answer: `value` (the key's text) is one of `choices` (two or more option
    texts; `ask` shows the key and 3 of the others, in the order given when `ranked`, else drawn at
    random; with fewer than 4 choices no item). `statistic` is the number the key was decided on, `margin` how far it had to
    be from a boundary."""

    value: str
    choices: tuple[str, ...]
    how: str
    question: str
    rationale: str
    shown: list[dict[str, Any]]
    window: Window
    category: str
    concept: str
    statistic: float
    margin: float
    other: Window | None = None
    ranked: bool = False  # the first choices after the key are the hardest distractors: show those
    # > 0: the choices are in order and the options are 4 of them `grid` apart, the key (at `value_at`) at a
    # uniform rank, so neither its rank nor its place among them tells it (`ask` draws the rank)
    grid: int = 0
    value_at: int = 0
    # the block call that made it, as plain JSON (`block_calls.BlockCall`): set by `replayable`
    call: dict[str, Any] | None = field(default=None, repr=False)
    extra: tuple[Window, ...] = field(default=(), repr=False)  # windows besides `window` and `other`
    # every key the block gives on these channels, where `choices` holds only some of them (the lags of
    # `leads`): the set a run balances its keys over (`blocks._KeyBalance`); empty: `choices`
    answers: tuple[str, ...] = field(default=(), repr=False)


def _fmt(value: float, unit: str = "", decimals: int = 2) -> str:
    suffix = "" if not unit else (unit if unit[0] in "%°'\"" else " " + unit)
    return f"{round(float(value), decimals) + 0.0:.{decimals}f}{suffix}"


def _shown(*windows: Window) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = []
    for window in windows:
        if window.shown not in shown:
            shown.append(dict(window.shown))
    return shown


def _unit(window: Window) -> str:
    return f" ({window.unit})" if window.unit else ""


def theil_sen(values: np.ndarray) -> tuple[float, float, float]:
    """The Theil-Sen slope per row of `values` and its two-sided 90% interval (Sen's, from
    Kendall's S), as (slope, low, high)."""
    n = len(values)
    i, j = np.triu_indices(n, k=1)
    slopes = np.sort((values[j] - values[i]) / (j - i))
    slope = float(np.median(slopes))
    # the interval's ranks: Sen (1968), with the variance of Kendall's S without ties
    spread = 1.6449 * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    m = len(slopes)
    lo = int(max(0, math.floor((m - spread) / 2)))
    hi = int(min(m - 1, math.ceil((m + spread) / 2)))
    return slope, float(slopes[lo]), float(slopes[hi])


def _robust_sigma(values: np.ndarray) -> float:
    return float(MAD_SCALE * np.median(np.abs(values - np.median(values))))


TREND_CHOICES = ("rises strongly", "rises slightly", "falls slightly", "falls strongly")


@replayable
def trend(window: Window, strong: float = 3.0, slight: float = 1.5) -> Choice | None:
    """Which way the window trends and how strongly. The trend is the Theil-Sen line; its change over
    the window is compared with the scatter around it (`MAD_SCALE` x the residuals' median absolute
    deviation): at least `strong` times it is "strongly", at most `slight` times "slightly". None when
    the slope's 90% interval holds 0 (no clear direction) or the ratio lies between `slight` and
    `strong` (the margin)."""
    values = window.values
    n = len(values)
    if n < 8:
        return None
    slope, low, high = theil_sen(values)
    if low <= 0 <= high:
        return None
    residuals = values - slope * np.arange(n)
    scatter = _robust_sigma(residuals)
    if scatter <= 0:
        return None
    change = slope * (n - 1)
    ratio = abs(change) / scatter
    if slight < ratio < strong:
        return None
    key = f"{'rises' if slope > 0 else 'falls'} {'strongly' if ratio >= strong else 'slightly'}"
    rationale = (f"The Theil-Sen line of the {window.about} changes by {_fmt(change, window.unit)} over the window "
                 f"(90% interval of the slope {_fmt(low * (n - 1), window.unit)} to {_fmt(high * (n - 1), window.unit)}"
                 f" over the window), {ratio:.1f} times the typical scatter around it ({_fmt(scatter, window.unit)}): "
                 f"it {key}.")
    question = (f"Which best describes the trend of the {window.about}? 'Strongly': the change along the trend is at "
                f"least {strong:g} times the typical day-to-day scatter around it; 'slightly': at most {slight:g} "
                "times.")
    return Choice(value=key, choices=TREND_CHOICES, how="trend", question=question, rationale=rationale,
                  shown=_shown(window), window=window, category="pattern_recognition", concept="trend",
                  statistic=math.copysign(ratio, slope), margin=strong - slight)


SEASONS: dict[str, tuple[Callable[[pd.DatetimeIndex], np.ndarray], Callable[[int], str], str]] = {
    "month": (lambda t: np.asarray(t.month), lambda k: MONTHS[k - 1], "in which month of the year"),
    "weekday": (lambda t: np.asarray(t.weekday), lambda k: WEEKDAYS[k], "on which day of the week"),
    "hour": (lambda t: np.asarray(t.hour), lambda k: f"{k:02d}:00", "at which hour of the day"),
}


def _stamps(window: Window) -> pd.DatetimeIndex | None:
    try:
        return pd.DatetimeIndex(pd.to_datetime(window.dates))
    except (ValueError, TypeError):
        return None


@replayable
def seasonal_peak(window: Window, by: str = "month", extreme: str = "max", margin: float = 2.0,
                  min_count: int = 3) -> Choice | None:
    """In which month, weekday or hour (`by`) the window is highest (`extreme`="max") or lowest ("min")
    on average, its overall trend (the Theil-Sen line) set aside, so that a rising series is not highest
    in the months its window ends in. Each group needs `min_count` values and there must be 3 or more;
    None when the best group's mean is not ahead of the runner-up by `margin` standard errors of their
    difference."""
    if by not in SEASONS or extreme not in ("max", "min"):
        raise ValueError(f"seasonal_peak: by in {', '.join(SEASONS)}, extreme in max, min; got {by!r}, {extreme!r}")
    stamps = _stamps(window)
    if stamps is None:
        return None
    key_of, name_of, words = SEASONS[by]
    step = -(-len(window.values) // MAX_THEIL_SEN)  # every step-th value: the pairwise slopes must fit
    slope = theil_sen(window.values[::step])[0] / step
    detrended = window.values - slope * np.arange(len(window.values))
    groups = pd.Series(detrended).groupby(key_of(stamps))
    counts, means, variances = groups.count(), groups.mean(), groups.var(ddof=1)
    keep = counts[counts >= min_count].index
    if len(keep) < 3:
        return None
    sign = 1 if extreme == "max" else -1
    order = sorted(keep, key=lambda k: -sign * means[k])
    best, second = order[0], order[1]
    error = math.sqrt(variances[best] / counts[best] + variances[second] / counts[second])
    gap = sign * (means[best] - means[second])
    if error <= 0 or gap / error < margin:
        return None
    side = "highest" if extreme == "max" else "lowest"
    names = [name_of(int(k)) for k in order]
    rationale = (f"With its trend ({_fmt(slope, window.unit, 4)} per step) taken out and grouped by {by}, the "
                 f"{window.about} is {side} in {names[0]} ({_fmt(means[best], window.unit)} against the trend line, "
                 f"{counts[best]} values), ahead of {names[1]} ({_fmt(means[second], window.unit)}) by "
                 f"{gap / error:.1f} standard errors.")
    question = (f"{words[0].upper()}{words[1:]} is the {window.about} {side} on average, relative to its overall "
                "trend?")
    return Choice(value=names[0], choices=tuple(names), how=f"seasonal {extreme} by {by}", question=question,
                  rationale=rationale, shown=_shown(window), window=window, category="pattern_recognition",
                  concept="seasonality", statistic=gap / error, margin=margin, ranked=True)


def _spans(window: Window, size: int) -> list[tuple[int, int]]:
    return [(start, start + size) for start in range(0, len(window.values) - size + 1, size)]


def _span_text(window: Window, span: tuple[int, int]) -> str:
    first, last = window.dates[span[0]], window.dates[span[1] - 1]
    return first if first == last else f"{first} to {last}"


REACH = 2  # an unusual value or stretch is measured against this many values on each side of it


@replayable
def unusual(window: Window, size: int = 1, min_z: float = 3.5, margin: float = 1.0, ratio: float = 1.25
            ) -> Choice | None:
    """The most unusual value (`size`=1) or stretch of `size` consecutive values (the window cut into
    such stretches from its start; their means compared): the one farthest from its local level, the
    median of the `REACH` values just before it and the `REACH` just after it. Stretches without
    `REACH` values on both sides are left out (the question says so).

    Why the local level and not the window's median, or the window with its trend removed: a series
    that trends or swings with the season (Mauna Loa CO2 rises all year round and cycles every
    year) lies farthest from any one level at the ends or the turning points of its window, so the
    window's median keyed the first or last options, which a blind reader picks from the dates
    alone, and removing a straight line still leaves the seasonal swing. The median of the nearest
    values follows any slow curve (on a straight line the median of two before and two after is the
    line in between) and ignores the spike itself; a level shift puts the values on either side of
    the step equally far from their neighbours, so it is no anomaly here (`level_shift` asks it).

    The distances are scaled by their robust spread (`MAD_SCALE` x the median distance): None when
    the farthest is under `min_z` spreads, when the runner-up is within `margin` of it or more than
    1 / `ratio` of its distance (two spikes alike), or with fewer than 6 to choose from. The other
    options are drawn from the other candidates at random, not the next most unusual: on a smooth
    seasonal series those are the season's turns, at dates of their own, and on CO2 the date nearest
    the middle of the others was the key in 39% of items (chance 25%)."""

    values, n = window.values, len(window.values)
    spans = [(a, b) for a, b in _spans(window, size) if a >= REACH and b + REACH <= n]
    if len(spans) < 6:
        return None
    means = np.array([values[a:b].mean() for a, b in spans])
    level = np.array([np.median(np.r_[values[a - REACH:a], values[b:b + REACH]]) for a, b in spans])
    distance = np.abs(means - level)
    sigma = float(MAD_SCALE * np.median(distance))
    if sigma <= 0:
        return None
    z = distance / sigma
    order = np.argsort(-z, kind="stable")
    top, second = int(order[0]), int(order[1])
    if z[top] < min_z or z[top] - z[second] < max(margin, (1 - 1 / ratio) * z[top]):
        return None
    texts = [_span_text(window, spans[int(i)]) for i in order]
    step = _step_word(window).replace("step", "value")
    what, its = (step, "value") if size == 1 else (f"stretch of {size} values", "mean")
    rationale = (f"The {its} of {texts[0]} ({_fmt(means[top], window.unit)}) lies {_fmt(distance[top], window.unit)} "
                 f"from the median of the {REACH} values before and the {REACH} after it ({_fmt(level[top], window.unit)})"
                 f": {z[top]:.1f} times the robust spread of these distances ({_fmt(sigma, window.unit)}); the next "
                 f"({_span_text(window, spans[second])}) {z[second]:.1f} times.")
    rule = (f"farthest (up or down) from the median of the {REACH} values just before it and the {REACH} just after "
            "it?")
    if size == 1:
        question = (f"Which {what} of the {window.about} is the most unusual: its value {rule} The first {REACH} and "
                    f"last {REACH} values are left out.")
    else:
        question = (f"The {window.about} is cut into stretches of {size} values from its first date. Which stretch is "
                    f"the most unusual: its mean {rule} Only stretches with {REACH} values on both sides count.")
    return Choice(value=texts[0], choices=tuple(texts), how=f"unusual {what}", question=question,
                  rationale=rationale, shown=_shown(window), window=window, category="anomaly_detection",
                  concept="anomaly", statistic=float(z[top]), margin=margin)


def _welch(left: np.ndarray, right: np.ndarray) -> float:
    error = math.sqrt(left.var(ddof=1) / len(left) + right.var(ddof=1) / len(right))
    return float((right.mean() - left.mean()) / error) if error > 0 else math.inf * np.sign(right.mean() - left.mean())


def _pooled_t(values: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    """|Student's t| of the means before and from each cut, one pooled variance (a short side's own
    variance, as in Welch's, makes the ends of a window look like shifts); inf where it is 0."""
    n = len(values)
    k = np.asarray(cuts)
    total, squares = np.cumsum(values), np.cumsum(values ** 2)
    left_sum, right_sum = total[k - 1], total[-1] - total[k - 1]
    left_sq, right_sq = squares[k - 1], squares[-1] - squares[k - 1]
    scatter = (left_sq - left_sum ** 2 / k) + (right_sq - right_sum ** 2 / (n - k))
    pooled = np.maximum(scatter, 0) / (n - 2)
    gap = np.abs(right_sum / (n - k) - left_sum / k)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = gap / np.sqrt(pooled * (1 / k + 1 / (n - k)))
    return np.where(pooled > 1e-12 * (1 + np.abs(values).max()) ** 2, t, np.inf)


SHORTEST_SIDE = 3  # a split with fewer values on a side is never an option


@replayable
def level_shift(window: Window, min_segment: int = 5, min_t: float = 4.0, margin: float = 1.0,
                apart: int = 2, ratio: float = 1.2) -> Choice | None:
    """The first date of a new level: the split of the window (each side at least `min_segment`
    values) whose means differ most (Student's t, pooled variance). None when no split reaches
    `min_t`, or when any split `apart` or more rows away (each side at least `SHORTEST_SIDE` values)
    comes within `margin` of it or above 1 / `ratio` of it (two shifts, or none clearly placed). The
    options are 4 split dates `apart` rows from each other, the key at a uniform rank (`grid`)."""
    values = window.values
    n = len(values)
    cuts = list(range(SHORTEST_SIDE, n - SHORTEST_SIDE + 1))
    if n < 2 * min_segment + 2 * apart:
        return None
    t = dict(zip(cuts, _pooled_t(values, cuts).tolist()))
    if not all(np.isfinite(v) for v in t.values()):
        return None
    best = max((k for k in cuts if min_segment <= k <= n - min_segment), key=lambda k: t[k])
    far = [k for k in cuts if abs(k - best) >= apart]
    rival = max(t[k] for k in far)
    if t[best] < min_t or t[best] - rival < max(margin, (1 - 1 / ratio) * t[best]):
        return None
    texts = [window.dates[k] for k in cuts]
    rationale = (f"Splitting the {window.about} before {texts[0]}: mean {_fmt(values[:best].mean(), window.unit)} "
                 f"before, {_fmt(values[best:].mean(), window.unit)} from then on (t = {t[best]:.1f}); the best split "
                 f"{apart} or more rows away reaches t = {rival:.1f}.")
    question = (f"The {window.about} shifts to a new level once. On which date does the new level begin (the first "
                "date after the shift)?")
    return Choice(value=window.dates[best], choices=tuple(texts), how="level shift", question=question, rationale=rationale,
                  shown=_shown(window), window=window, category="temporal_relation", concept="structural_break",
                  statistic=float(t[best]), margin=margin, value_at=cuts.index(best), grid=apart)


def _names(windows: Sequence[Window]) -> list[str] | None:
    """What tells windows apart in an option: their channels, records, or dates; None when nothing does."""
    for name in (lambda w: w.channel, lambda w: f"record {w.record_id}", lambda w: f"{w.first} to {w.last}"):
        names = [name(w) for w in windows]
        if len(set(names)) == len(names):
            return names
    return None


def canonical(how: str, words: Mapping[str, str]) -> str:
    """`how` as a block names it: in lower case with "_" for spaces and hyphens, then through `words`
    (the other words a model writes for it) where it is one of them."""
    word = str(how).strip().lower().replace(" ", "_").replace("-", "_")
    return words.get(word, word)


COMPARISONS = ("higher", "more_variable", "trends_more")
# the other words a model writes for a comparison (lower case, "_" for spaces and hyphens): each orders the
# windows exactly as the comparison does (a variance as its standard deviation, a mean as "higher")
COMPARISON_WORDS = {
    **dict.fromkeys(("mean", "average", "higher_mean", "larger", "greater"), "higher"),
    **dict.fromkeys(("std", "standard_deviation", "variance", "variability", "variable", "most_variable",
                     "more_varied"), "more_variable"),
    **dict.fromkeys(("trend", "slope", "steeper", "trends_most", "steepest_trend"), "trends_more")}
COMPARE_MARGINS = {"higher": 2.0, "more_variable": 1.3}
COMPARE_WORDS = {"higher": "the highest on average", "more_variable": "the most variable (the largest standard "
                 "deviation)", "trends_more": "the steepest trend, up or down (the largest Theil-Sen slope in size)"}


def _closer(how: str, best: Window, second: Window, margin: float) -> tuple[bool, float]:
    """Whether `best` is ahead of `second` by the margin for `how`, and the statistic."""
    if how == "higher":
        t = _welch(second.values, best.values)
        return t >= margin, t
    if how == "more_variable":
        low = float(second.values.std(ddof=1))
        ratio = float(best.values.std(ddof=1)) / low if low > 0 else math.inf
        return ratio >= margin, ratio
    (_, lo_a, hi_a), (_, lo_b, hi_b) = theil_sen(best.values), theil_sen(second.values)
    least_a = min(abs(lo_a), abs(hi_a)) if lo_a * hi_a > 0 else 0.0  # the interval's least size
    return least_a > max(abs(lo_b), abs(hi_b)), least_a


@replayable
def compare(a: Window, others: Window | Sequence[Window], how: str = "higher", margin: float | None = None
            ) -> Choice | None:
    """Which of `a` and `others` (other channels over the same dates, or other records or dates of
    one channel) is `how`: "higher" on average (None unless its mean is ahead of the runner-up's by
    `margin` standard errors, 2 by default), "more_variable" (the largest standard deviation; None
    unless it is `margin` times the runner-up's, 1.3 by default), or "trends_more" (the largest
    absolute Theil-Sen slope; None unless the least size in its 90% interval exceeds the runner-up's
    largest). "higher" and "trends_more" need one unit; an item needs 4 windows (4 options). `how` may
    also be a word of `COMPARISON_WORDS` (what a model writes for one of the three)."""
    written, how = how, canonical(how, COMPARISON_WORDS)
    if how not in COMPARISONS:
        raise ValueError(f"compare: how must be one of {', '.join(COMPARISONS)} (or {', '.join(COMPARISON_WORDS)}), "
                         f"got {written!r}")
    windows = [a, *([others] if not isinstance(others, Sequence) else others)]
    names = _names(windows)
    if names is None or len(windows) < 2 or (how != "more_variable" and len({w.unit for w in windows}) > 1):
        return None
    measure: dict[str, Callable[[np.ndarray], float]] = {
        "higher": lambda v: float(v.mean()), "more_variable": lambda v: float(v.std(ddof=1)),
        "trends_more": lambda v: abs(theil_sen(v)[0])}
    sizes = [measure[how](w.values) for w in windows]
    order = sorted(range(len(windows)), key=lambda i: -sizes[i])
    bound = COMPARE_MARGINS.get(how, 0.0) if margin is None else margin
    ahead, stat = _closer(how, windows[order[0]], windows[order[1]], bound)
    if not ahead:
        return None
    texts = [names[i] for i in order]
    values = ", ".join(f"{names[i]} {_fmt(sizes[i], windows[i].unit, 3)}" for i in order)
    rationale = f"By {COMPARE_WORDS[how].split(' (')[0].removeprefix('the ')}: {values}; {texts[0]} is {COMPARE_WORDS[how].split(' (')[0]}."
    listed = "; ".join(f"{n}: the {w.about}" for n, w in zip(names, windows))
    question = f"Which of these is {COMPARE_WORDS[how]}? {listed}."
    return Choice(value=texts[0], choices=tuple(texts), how=f"compare {how}", question=question, rationale=rationale,
                  shown=_shown(*windows), window=a, other=windows[1], category="similarity_analysis",
                  concept="comparison", statistic=float(stat), margin=bound, ranked=True, extra=tuple(windows[2:]))


CORRELATION_CHOICES = ("strongly positive", "weakly positive", "no clear correlation", "weakly negative",
                       "strongly negative")
CORRELATION_BOUNDS = (0.2, 0.6)


@replayable
def correlation(a: Window, b: Window, margin: float = 0.1) -> Choice | None:
    """How two channels over the same dates correlate: Pearson's r in five bands (strongly / weakly
    positive at |r| >= 0.6 / 0.2, no clear correlation below 0.2, and the negative ones). None when r
    lies within `margin` of a band's edge, or the windows' dates differ."""
    if a.dates != b.dates or len(a.values) < 10 or a.values.std() == 0 or b.values.std() == 0:
        return None
    r = float(np.corrcoef(a.values, b.values)[0, 1])
    weak, strong = CORRELATION_BOUNDS
    if any(abs(abs(r) - edge) < margin for edge in CORRELATION_BOUNDS):
        return None
    size = abs(r)
    if size < weak:
        key = "no clear correlation"
    else:
        key = f"{'strongly' if size >= strong else 'weakly'} {'positive' if r > 0 else 'negative'}"
    rationale = f"Pearson's r of {a.channel} and {b.channel} over the {len(a.values)} shared dates is {r:.2f}: {key}."
    question = (f"How do the {a.about} and the {b.channel}{_unit(b)} over the same dates correlate? Strongly: "
                f"|Pearson r| of at least {strong}; weakly: {weak} to {strong}; no clear correlation: below {weak}.")
    return Choice(value=key, choices=CORRELATION_CHOICES, how="correlation", question=question, rationale=rationale,
                  shown=_shown(a, b), window=a, other=b, category="similarity_analysis", concept="correlation",
                  statistic=r, margin=margin)


def _lagged(a: np.ndarray, b: np.ndarray, lag: int) -> float:
    """corr(a[t], b[t + lag])."""
    if lag > 0:
        a, b = a[:-lag], b[lag:]
    elif lag < 0:
        a, b = a[-lag:], b[:lag]
    if len(a) < 5:
        return 0.0
    a, b = a - a.mean(), b - b.mean()
    scale = float(np.sqrt((a @ a) * (b @ b)))
    return float(np.clip((a @ b) / scale, -1.0, 1.0)) if scale > 0 else 0.0


def _step_word(window: Window) -> str:
    """What one row of the window is in time ("day", "hour"), else "step"."""
    try:  # numpy reads the ISO dates `date_labels` writes, without pandas' per-call format inference
        gaps = np.unique(np.diff(np.array(window.dates, dtype="datetime64[s]")))
    except ValueError:
        return "step"
    for word, size in (("day", np.timedelta64(1, "D")), ("week", np.timedelta64(7, "D")),
                       ("hour", np.timedelta64(1, "h")), ("minute", np.timedelta64(1, "m"))):
        if len(gaps) == 1 and gaps[0] == size:
            return word
    return "step"


@replayable
def leads(a: Window, b: Window, max_lag: int = 5, min_r: float = 0.4, margin: float = 0.1, apart: int = 2
          ) -> Choice | None:
    """Which of two channels over the same dates moves first, and by how much: the lag in
    -`max_lag`..`max_lag` rows at which corr(a[t], b[t + lag]) is largest (they move alike, shifted);
    lag > 0: a leads by lag rows, 0: they move together ("a leads b by 0 day(s)"). None when that correlation is under `min_r`,
    or any lag `apart` or more rows away comes within `margin` of it (the other options are the
    three best such lags, each `apart` from the others)."""
    if a.dates != b.dates or len(a.values) < 4 * max_lag or a.channel == b.channel:
        return None
    lags = list(range(-max_lag, max_lag + 1))
    r = {lag: _lagged(a.values, b.values, lag) for lag in lags}
    best = max(lags, key=lambda lag: r[lag])
    far = [lag for lag in lags if abs(lag - best) >= apart]
    if r[best] < min_r or r[best] - max(r[lag] for lag in far) < margin:
        return None
    picked = [best]
    for lag in sorted(far, key=lambda lag: -r[lag]):
        if all(abs(lag - p) >= apart for p in picked):
            picked.append(lag)
    step = _step_word(a)

    def answer(lag: int) -> str:  # every option alike in form and length: "a leads b by 0 day(s)" is together
        first, then = (a.channel, b.channel) if lag >= 0 else (b.channel, a.channel)
        return f"{first} leads {then} by {abs(lag)} {step}(s)"

    texts = [answer(lag) for lag in picked]
    rationale = (f"The correlation of {a.channel} with {b.channel} shifted by {best} rows is {r[best]:.2f}, the "
                 f"largest of the shifts -{max_lag} to {max_lag}; the largest {apart} or more rows away is "
                 f"{max(r[lag] for lag in far):.2f}: {texts[0]}.")
    question = (f"Comparing the {a.about} with the {b.channel}{_unit(b)} over the same dates, which moves first and "
                f"by how much (the shift of up to {max_lag} {step}s that best lines up their ups and downs)?")
    return Choice(value=texts[0], choices=tuple(texts), how="leads", question=question, rationale=rationale,
                  shown=_shown(a, b), window=a, other=b, category="causality", concept="cross_correlation",
                  statistic=r[best], margin=margin, ranked=True, answers=tuple(answer(lag) for lag in lags))


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
PART_NAMES = {2: "half", 3: "third", 4: "quarter", 5: "fifth", 6: "sixth"}


@replayable
def volatility_regime(window: Window, parts: int = 4, margin: float = 1.5) -> Choice | None:
    """Which of `parts` (2 to 6) equal consecutive parts of the window ("the first quarter", ...) is
    the most volatile: the largest standard deviation of its step-to-step changes. None when it is not
    `margin` times the runner-up's, or a part has fewer than 5 changes."""
    size = len(window.values) // parts
    if parts not in PART_NAMES or size < 6:
        return None
    spans = [(i * size, (i + 1) * size) for i in range(parts)]
    spread = np.array([np.diff(window.values[a:b]).std(ddof=1) for a, b in spans])
    order = np.argsort(-spread, kind="stable")
    top, second = int(order[0]), int(order[1])
    if spread[second] <= 0 or spread[top] / spread[second] < margin:
        return None
    part = PART_NAMES[parts]
    names = [f"the {ORDINALS[i]} {part}" for i in range(parts)]
    texts = [names[int(i)] for i in order]
    rationale = (f"The standard deviation of the step-to-step changes of the {window.about} is "
                 + ", ".join(f"{_fmt(spread[i], window.unit)} in {names[i]} ({_span_text(window, spans[i])})"
                             for i in range(parts))
                 + f": the most volatile is {texts[0]}, {spread[top] / spread[second]:.1f} times the next.")
    question = (f"The {window.about} is cut into {parts} equal consecutive parts of {size} values (any rest at the end "
                f"left out). In which {part} does it change most erratically from one value to the next (the largest "
                "standard deviation of its step-to-step changes)?")
    return Choice(value=texts[0], choices=tuple(texts), how="volatility regime", question=question,
                  rationale=rationale, shown=_shown(window), window=window, category="noise_understanding",
                  concept="volatility", statistic=float(spread[top] / spread[second]), margin=margin, ranked=True)


@replayable
def most_alike(reference: Window, candidates: Sequence[Window], margin: float = 0.15,
               min_r: float = 0.5) -> Choice | None:
    """Which candidate window (same length as the reference) is most alike the reference in shape:
    the largest Pearson correlation of their values, position by position (level and scale do not
    matter). None when it is under `min_r`, the runner-up comes within `margin`, two candidates read
    alike, or a length differs."""
    n = len(reference.values)
    if len(candidates) < 2 or any(len(c.values) != n for c in candidates) or reference.values.std() == 0:
        return None
    named = _names([reference, *candidates])
    if named is None or any(c.values.std() == 0 for c in candidates):
        return None
    names = named[1:]
    r = np.array([np.corrcoef(reference.values, c.values)[0, 1] for c in candidates])
    order = np.argsort(-r, kind="stable")
    top, second = int(order[0]), int(order[1])
    if r[top] < min_r or r[top] - r[second] < margin:
        return None
    rationale = (f"Correlation with the {reference.about}: "
                 + ", ".join(f"{names[i]} {r[i]:.2f}" for i in range(len(candidates)))
                 + f"; the most alike is {names[top]}.")
    question = (f"Which of the other series shown is most alike the {reference.about} in shape (the same ups and "
                "downs at the same positions, whatever its level and scale)?")
    texts = [names[int(i)] for i in order]
    return Choice(value=texts[0], choices=tuple(texts), how="most alike", question=question, rationale=rationale,
                  shown=_shown(reference, *candidates), window=reference, category="similarity_analysis",
                  concept="similarity", statistic=float(r[top] - r[second]), margin=margin, ranked=True,
                  extra=tuple(candidates))


REASONING_BLOCKS: dict[str, Callable[..., Choice | None]] = {
    "trend": trend,
    "seasonal_peak": seasonal_peak,
    "unusual": unusual,
    "level_shift": level_shift,
    "compare": compare,
    "correlation": correlation,
    "leads": leads,
    "volatility_regime": volatility_regime,
    "most_alike": most_alike,
}


@dataclass(frozen=True)
class BlockUse:
    """A reasoning block as a plan names it: a call on the skeleton's `win` (`{other}`: another
    channel of the record over the same dates; `{others}`: windows of the same length from other
    records), its category and concept, what it asks, and a title and question for a brief
    (`{channel}`, `{second}`: the channels)."""

    block: str
    call: str
    category: str
    concept: str
    asks: str
    title: str
    question: str

    @property
    def pair(self) -> bool:
        """It needs a second channel."""
        return "{other}" in self.call

    def written(self, other: str | None = None) -> str | None:
        """The call with `other` (a second channel) filled in; None when it needs one and there is none."""
        if self.pair and other is None:
            return None
        return self.call.format(other=f'align_window(handler, win, "{other}")',
                                others="take_windows(handler, win, 4)")


USES: tuple[BlockUse, ...] = (
    BlockUse("trend", "trend(win)", "pattern_recognition", "trend",
             "which way the window trends and how strongly (rises/falls strongly/slightly)",
             "Trend of {channel} in a window", "Which best describes the trend of {channel} in the window of "
             "<record> shown?"),
    BlockUse("seasonal_peak", 'seasonal_peak(win, "weekday")', "pattern_recognition", "seasonality",
             "on which weekday (or month, hour) the channel is highest on average, its trend set aside",
             "Weekday of highest {channel}", "On which day of the week is {channel} highest on average in "
             "<record>?"),
    BlockUse("unusual", "unusual(win)", "anomaly_detection", "anomaly",
             "the most unusual day (farthest from the median of the 2 days before and 2 after, clear gap to the next)",
             "Most unusual day of {channel}", "Which day of the window of <record> shown has the most unusual "
             "{channel}?"),
    BlockUse("level_shift", "level_shift(win)", "temporal_relation", "structural_break",
             "the date the channel shifts to a new level", "Date of a level shift in {channel}",
             "On which date does {channel} shift to a new level in the window of <record> shown?"),
    BlockUse("compare", 'compare(win, take_windows(handler, win, 3), "more_variable")', "similarity_analysis",
             "comparison", "which of 4 records' windows of a channel is the most variable (or highest, or trends most)",
             "Most variable of four records' {channel}", "Which of four records shown has the most variable "
             "{channel}?"),
    BlockUse("correlation", "correlation(win, {other})", "similarity_analysis", "correlation",
             "how two channels correlate (strongly/weakly positive or negative, or not)",
             "Correlation of {channel} and {second}", "How do {channel} and {second} correlate in the window of "
             "<record> shown?"),
    BlockUse("most_alike", "most_alike(win, {others})", "similarity_analysis", "similarity",
             "which of 4 other records' windows is most alike in shape",
             "Record most alike in {channel}", "Which of the other records shown is most alike <record> in the "
             "shape of its {channel}?"),
    BlockUse("leads", "leads(win, {other})", "causality", "cross_correlation",
             "which of two channels moves first (lagged correlation)", "Whether {channel} or {second} moves first",
             "Which moves first in the window of <record> shown: {channel} or {second}?"),
    BlockUse("volatility_regime", "volatility_regime(win)", "noise_understanding", "volatility",
             "which quarter of the window is the most volatile", "Most volatile part of {channel}",
             "In which quarter of the window of <record> shown does {channel} change most erratically?"),
)


def uses_for(category: str, *, pairs: bool = True) -> list[BlockUse]:
    """The reasoning blocks that answer a category's questions (`pairs`: also those that need two
    channels)."""
    return [use for use in USES if use.category == category and (pairs or not use.pair)]


# the category and concept of what each block computes (the statistics blocks' too)
BLOCK_CATEGORIES: dict[str, tuple[str, str]] = {
    "channel_stat": ("arithmetic", "arithmetic"), "count_beyond": ("arithmetic", "arithmetic"),
    "change_between": ("arithmetic", "arithmetic"), "compare_windows": ("arithmetic", "comparison"),
    "first_day": ("temporal_relation", "temporal_order"),
    **{use.block: (use.category, use.concept) for use in reversed(USES)},
}
