"""Reasoning blocks: questions about the shape of a series, answered right by construction.

The statistics blocks (`items.blocks`) read a number off a window; these ask what a reader
reasons about: which way and how strongly a channel trends, when in the season it peaks, which
day is unusual, when its level shifts, which of two channels is higher / more variable / trends
more, how two channels correlate, which one leads, where the series is most volatile, and which
of several windows is most alike a reference. Each block is a pure function of the windows it is
given and its parameters, and returns a `Choice`: the key, the options it is chosen among, the
question (in the window's channel, unit, record and dates), the rationale, the category and the
concept. Every block has an unambiguity margin: where the statistic that decides the key lies
within the margin of a boundary (of another option, or of "no answer"), the block returns None
and the template draws again, so no item is keyed on a coin flip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from itemsmith.items.blocks import Window

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_THEIL_SEN = 3000  # a seasonal peak's trend is fitted to at most this many values
MAD_SCALE = 1.4826  # a normal sample's standard deviation per median absolute deviation


@dataclass(frozen=True, eq=False)
class Choice:
    """A reasoning block's answer: `value` (the key's text) is one of `choices` (two or more option
    texts; `ask` shows the key and up to 3 of the others, in the order given when `ranked`, else
    drawn at random). `statistic` is the number the key was decided on, `margin` how far it had to
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
    extra: tuple[Window, ...] = field(default=(), repr=False)  # windows besides `window` and `other`


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


def unusual(window: Window, size: int = 1, min_z: float = 3.5, margin: float = 1.0, ratio: float = 1.25
            ) -> Choice | None:
    """The most unusual day (`size`=1) or stretch of `size` consecutive values (the window cut into
    such stretches from its start; their means compared): the one farthest from the median in robust
    z-scores (distance over `MAD_SCALE` x the median absolute deviation). None when it is not at
    least `min_z` away, when the runner-up is within `margin` of it or more than 1 / `ratio` of its
    distance (two spikes alike), or with fewer than 8 stretches.
    The other options are the next most unusual stretches."""
    spans = _spans(window, size)
    if len(spans) < 8:
        return None
    means = np.array([window.values[a:b].mean() for a, b in spans])
    sigma = _robust_sigma(means)
    if sigma <= 0:
        return None
    z = (means - np.median(means)) / sigma
    order = np.argsort(-np.abs(z), kind="stable")
    top, second = int(order[0]), int(order[1])
    if abs(z[top]) < min_z or abs(z[top]) - abs(z[second]) < max(margin, (1 - 1 / ratio) * abs(z[top])):
        return None
    texts = [_span_text(window, spans[int(i)]) for i in order]
    what = "day" if size == 1 else f"stretch of {size} values"
    level = "value" if size == 1 else "mean"
    rationale = (f"The median of the {window.about} is {_fmt(np.median(means), window.unit)} and the robust spread "
                 f"{_fmt(sigma, window.unit)}; the {level} of {texts[0]} ({_fmt(means[top], window.unit)}) lies "
                 f"{abs(z[top]):.1f} spreads away, the next ({texts[1]}) {abs(z[second]):.1f}.")
    parts = "" if size == 1 else f", cut into stretches of {size} values from its first date,"
    question = (f"Which {what} of the {window.about}{parts} is the most unusual (its {level} farthest from the "
                "typical level)?")
    return Choice(value=texts[0], choices=tuple(texts), how=f"unusual {what}", question=question,
                  rationale=rationale, shown=_shown(window), window=window, category="anomaly_detection",
                  concept="anomaly", statistic=float(abs(z[top])), margin=margin, ranked=True)


def _welch(left: np.ndarray, right: np.ndarray) -> float:
    error = math.sqrt(left.var(ddof=1) / len(left) + right.var(ddof=1) / len(right))
    return float((right.mean() - left.mean()) / error) if error > 0 else math.inf * np.sign(right.mean() - left.mean())


def level_shift(window: Window, min_segment: int = 5, min_t: float = 5.0, margin: float = 1.5,
                apart: int = 3, ratio: float = 1.25) -> Choice | None:
    """The first date of a new level: the split of the window (each side at least `min_segment`
    values) whose means differ most (Welch's t). None when no split reaches `min_t`, or when a split
    `apart` or more rows away comes within `margin` of it or above 1 / `ratio` of it (two shifts, or
    none clearly placed). The
    other options are the strongest splits `apart` rows from the key and from each other."""
    values = window.values
    n = len(values)
    cuts = list(range(min_segment, n - min_segment + 1))
    if len(cuts) < 2 * apart + 4:
        return None
    t = np.array([abs(_welch(values[:k], values[k:])) for k in cuts])
    if not np.isfinite(t).all():
        return None
    best = int(np.argmax(t))
    if t[best] < min_t:
        return None
    far = [i for i in range(len(cuts)) if abs(i - best) >= apart]
    if not far or t[best] - max(t[i] for i in far) < max(margin, (1 - 1 / ratio) * t[best]):
        return None
    picked = [best]
    for i in sorted(far, key=lambda i: -t[i]):
        if all(abs(i - j) >= apart for j in picked):
            picked.append(i)
    texts = [window.dates[cuts[i]] for i in picked]
    k = cuts[best]
    rationale = (f"Splitting the {window.about} before {texts[0]}: mean {_fmt(values[:k].mean(), window.unit)} before, "
                 f"{_fmt(values[k:].mean(), window.unit)} from then on (Welch t = {t[best]:.1f}); the best split "
                 f"{apart} or more days away reaches t = {max(t[i] for i in far):.1f}.")
    question = (f"The {window.about} shifts to a new level once. On which date does the new level begin (the first "
                "date after the shift)?")
    return Choice(value=texts[0], choices=tuple(texts), how="level shift", question=question, rationale=rationale,
                  shown=_shown(window), window=window, category="temporal_relation", concept="structural_break",
                  statistic=float(t[best]), margin=margin, ranked=True)


def _name(window: Window, other: Window) -> str:
    """What tells two windows apart in an option: the channel, the record, or the dates."""
    if window.channel != other.channel:
        return window.channel
    if window.record_id != other.record_id:
        return f"record {window.record_id}"
    return f"{window.first} to {window.last}"


COMPARISONS = ("higher", "more_variable", "trends_more")


COMPARE_MARGINS = {"higher": 2.0, "more_variable": 1.5}


def compare(a: Window, b: Window, how: str = "higher", margin: float | None = None) -> Choice | None:
    """Which of two windows (two channels over the same dates, or two records or dates of one
    channel) is `how`: "higher" on average (None unless the means differ by `margin` standard errors,
    2 by default), "more_variable" (the larger standard deviation; None unless it is `margin` times
    the smaller, 1.5 by default), or "trends_more" (the larger absolute Theil-Sen slope; None unless
    the least size in its 90% interval exceeds the other's largest). "higher" and "trends_more" need
    one unit."""
    if how not in COMPARISONS:
        raise ValueError(f"compare: how must be one of {', '.join(COMPARISONS)}, got {how!r}")
    if how != "more_variable" and a.unit != b.unit:
        return None
    name_a, name_b = _name(a, b), _name(b, a)
    if name_a == name_b:
        return None
    unit = a.unit
    if how == "higher":
        bound = COMPARE_MARGINS[how] if margin is None else margin
        stat = -_welch(a.values, b.values)  # > 0: a is higher
        if abs(stat) < bound:
            return None
        first = stat > 0
        detail = (f"mean {_fmt(a.values.mean(), unit)} against {_fmt(b.values.mean(), unit)} "
                  f"({abs(stat):.1f} standard errors apart)")
        words = "higher on average"
    elif how == "more_variable":
        sa, sb = float(a.values.std(ddof=1)), float(b.values.std(ddof=1))
        ratio_needed = COMPARE_MARGINS[how] if margin is None else margin
        if min(sa, sb) <= 0 or max(sa, sb) / min(sa, sb) < ratio_needed:
            return None
        stat, first = max(sa, sb) / min(sa, sb), sa > sb
        detail = f"standard deviation {_fmt(sa, a.unit)} against {_fmt(sb, b.unit)}"
        words, bound = "more variable (the larger standard deviation)", ratio_needed
    else:
        (slope_a, lo_a, hi_a), (slope_b, lo_b, hi_b) = theil_sen(a.values), theil_sen(b.values)
        big_a = min(abs(lo_a), abs(hi_a)) if lo_a * hi_a > 0 else 0.0  # the interval's least |slope|
        big_b = min(abs(lo_b), abs(hi_b)) if lo_b * hi_b > 0 else 0.0
        most_a, most_b = max(abs(lo_a), abs(hi_a)), max(abs(lo_b), abs(hi_b))
        if big_a > most_b:
            first = True
        elif big_b > most_a:
            first = False
        else:
            return None
        stat = abs(slope_a) / max(abs(slope_b), 1e-12)
        detail = (f"Theil-Sen slope {_fmt(slope_a, unit)} against {_fmt(slope_b, unit)} per step (90% intervals "
                  "that do not overlap in size)")
        words, bound = "trends more steeply (up or down)", 0.0
    key, other = (name_a, name_b) if first else (name_b, name_a)
    rationale = f"{a.about} against {b.about}: {detail}; {key} is {words.split(' (')[0]}."
    question = f"Which is {words}: the {a.about}, or the {b.about}? Answer {name_a} or {name_b}."
    return Choice(value=key, choices=(key, other), how=f"compare {how}", question=question, rationale=rationale,
                  shown=_shown(a, b), window=a, other=b, category="similarity_analysis", concept="comparison",
                  statistic=float(stat), margin=bound)


CORRELATION_CHOICES = ("strongly positive", "weakly positive", "no clear correlation", "weakly negative",
                       "strongly negative")
CORRELATION_BOUNDS = (0.2, 0.6)


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
    if len(a) < 5 or a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def leads(a: Window, b: Window, max_lag: int = 5, min_r: float = 0.4, margin: float = 0.1) -> Choice | None:
    """Which of two channels over the same dates moves first: the lag in -`max_lag`..`max_lag` rows
    at which corr(a[t], b[t + lag]) is largest (they move alike, shifted); lag > 0: a leads. None when
    that correlation is under `min_r`, or the best lag of another answer (a leads / b leads / together
    at lag 0) comes within `margin` of it."""
    if a.dates != b.dates or len(a.values) < 4 * max_lag or a.channel == b.channel:
        return None
    lags = list(range(-max_lag, max_lag + 1))
    r = {lag: _lagged(a.values, b.values, lag) for lag in lags}
    best = max(lags, key=lambda lag: r[lag])
    if r[best] < min_r:
        return None
    answer_of = {lag: f"{a.channel} leads {b.channel}" if lag > 0 else f"{b.channel} leads {a.channel}" if lag < 0
                 else "they move together (no lead)" for lag in lags}
    rivals = [r[lag] for lag in lags if answer_of[lag] != answer_of[best]]
    if r[best] - max(rivals) < margin:
        return None
    key = answer_of[best]
    choices = (key, *dict.fromkeys(v for v in answer_of.values() if v != key))
    rationale = (f"The correlation of {a.channel} with {b.channel} shifted by {best} rows is {r[best]:.2f}, the "
                 f"strongest of the lags -{max_lag} to {max_lag}; the best of the other answers reaches "
                 f"{max(rivals):.2f}: {key}" + (f" by {abs(best)} rows." if best else "."))
    question = (f"Comparing the {a.about} with the {b.channel}{_unit(b)} over the same dates, which moves first "
                f"(the shift of up to {max_lag} rows that best lines up their ups and downs)?")
    return Choice(value=key, choices=choices, how="leads", question=question, rationale=rationale,
                  shown=_shown(a, b), window=a, other=b, category="causality", concept="cross_correlation",
                  statistic=r[best], margin=margin)


def volatility_regime(window: Window, parts: int = 3, margin: float = 1.5) -> Choice | None:
    """Which of `parts` equal consecutive parts of the window is the most volatile: the largest
    standard deviation of its day-to-day changes. None when it is not `margin` times the runner-up's,
    or a part has fewer than 6 changes."""
    size = len(window.values) // parts
    if parts < 2 or size < 7:
        return None
    spans = [(i * size, (i + 1) * size) for i in range(parts)]
    spread = np.array([np.diff(window.values[a:b]).std(ddof=1) for a, b in spans])
    order = np.argsort(-spread, kind="stable")
    top, second = int(order[0]), int(order[1])
    if spread[second] <= 0 or spread[top] / spread[second] < margin:
        return None
    texts = [_span_text(window, spans[int(i)]) for i in order]
    rationale = (f"The standard deviation of the day-to-day changes of the {window.about} is "
                 + ", ".join(f"{_fmt(spread[i], window.unit)} from {_span_text(window, spans[i])}" for i in range(parts))
                 + f": the most volatile part is {texts[0]}, {spread[top] / spread[second]:.1f} times the next.")
    question = (f"The {window.about} is cut into {parts} equal parts. In which part does it change most erratically "
                "from one value to the next (the largest standard deviation of its step-to-step changes)?")
    return Choice(value=texts[0], choices=tuple(texts), how="volatility regime", question=question,
                  rationale=rationale, shown=_shown(window), window=window, category="noise_understanding",
                  concept="volatility", statistic=float(spread[top] / spread[second]), margin=margin, ranked=True)


def most_alike(reference: Window, candidates: Sequence[Window], margin: float = 0.15,
               min_r: float = 0.5) -> Choice | None:
    """Which candidate window (same length as the reference) is most alike the reference in shape:
    the largest Pearson correlation of their values, position by position (level and scale do not
    matter). None when it is under `min_r`, the runner-up comes within `margin`, two candidates read
    alike, or a length differs."""
    n = len(reference.values)
    if len(candidates) < 2 or any(len(c.values) != n for c in candidates) or reference.values.std() == 0:
        return None
    names = [_name(c, reference) for c in candidates]
    if len(set(names)) != len(names) or any(c.values.std() == 0 for c in candidates):
        return None
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
    channel of the record, aligned on the same dates; `{others}`: windows of the same length from
    other records), its category and concept, and what it asks."""

    block: str
    call: str
    category: str
    concept: str
    asks: str

    def written(self, other: str | None = None) -> str | None:
        """The call with `other` (a second channel) filled in; None when it needs one and there is none."""
        if "{other}" in self.call and other is None:
            return None
        return self.call.format(other=f'align_window(handler, win, "{other}")',
                                others="take_windows(handler, win, 3)")


USES: tuple[BlockUse, ...] = (
    BlockUse("trend", "trend(win)", "pattern_recognition", "trend",
             "which way the window trends and how strongly (rises/falls strongly/slightly)"),
    BlockUse("seasonal_peak", 'seasonal_peak(win, "weekday")', "pattern_recognition", "seasonality",
             "in which month / weekday / hour the channel is highest on average (long windows)"),
    BlockUse("unusual", "unusual(win)", "anomaly_detection", "anomaly",
             "the most unusual day (robust z-score, clear gap to the next)"),
    BlockUse("unusual", "unusual(win, 3)", "anomaly_detection", "anomaly",
             "the most unusual stretch of 3 days"),
    BlockUse("level_shift", "level_shift(win)", "temporal_relation", "structural_break",
             "the date the channel shifts to a new level"),
    BlockUse("compare", 'compare(win, {other}, "more_variable")', "similarity_analysis", "comparison",
             "which of two channels is more variable (or higher, or trends more)"),
    BlockUse("compare", 'compare(win, take_windows(handler, win, 1)[0], "higher")', "similarity_analysis",
             "comparison", "which of two records is higher on average"),
    BlockUse("correlation", "correlation(win, {other})", "similarity_analysis", "correlation",
             "how two channels correlate (strongly/weakly positive or negative, or not)"),
    BlockUse("most_alike", "most_alike(win, {others})", "similarity_analysis", "similarity",
             "which of 3 other records' windows is most alike in shape"),
    BlockUse("leads", "leads(win, {other})", "causality", "cross_correlation",
             "which of two channels moves first (lagged correlation)"),
    BlockUse("volatility_regime", "volatility_regime(win)", "noise_understanding", "volatility",
             "which third of the window is the most volatile"),
)


def uses_for(category: str) -> list[BlockUse]:
    """The reasoning blocks that answer a category's questions."""
    return [use for use in USES if use.category == category]
