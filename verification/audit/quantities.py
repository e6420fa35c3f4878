"""The quantities a text names (max, min, mean, count, ...), shared by the planner's brief check
and the audit's key check, and the statistics of a series that compute them.

Words map to quantities after `normal_text` (lower case, underscores as spaces), so `temp_max` in a
question names the max too: a text with more quantities than it means only makes the checks that
compare quantities more lenient, never stricter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["STATISTICS", "agree", "normal_text", "quantities"]

_QUANTITY_WORDS: dict[str, tuple[str, ...]] = {
    "max": ("max", "maximum", "maxima", "highest", "largest", "biggest", "greatest", "peak", "peaks", "peaked",
            "argmax", "idxmax", "nlargest", "warmest", "hottest", "wettest", "windiest", "strongest"),
    "min": ("min", "minimum", "minima", "lowest", "smallest", "fewest", "trough", "troughs", "argmin", "idxmin",
            "nsmallest", "coldest", "coolest", "driest", "calmest", "weakest"),
    "mean": ("mean", "means", "average", "averages", "averaged", "avg"),
    "median": ("median", "medians"),
    "sum": ("sum", "sums", "summed", "total", "totals", "cumulative", "cumsum", "accumulated"),
    "count": ("count", "counts", "counted", "how many", "number of", "len"),
    "share": ("share", "percentage", "percent", "fraction", "proportion", "ratio"),
    "spread": ("std", "stdev", "standard deviation", "variance", "variability", "volatility", "volatile",
               "spread", "dispersion", "iqr", "interquartile"),
    "range": ("range", "ptp", "peak to peak"),
    "correlation": ("correlation", "correlations", "correlated", "correlate", "corr", "corrcoef", "pearson",
                    "spearman", "covariance", "cov", "autocorrelation"),
    "change": ("change", "changes", "changed", "diff", "diffs", "difference", "differences", "jump", "jumps",
               "delta", "increase", "increases", "increased", "decrease", "decreases", "decreased", "rise", "rises",
               "rose", "fall", "falls", "drop", "drops", "dropped", "growth", "grew"),
    "trend": ("trend", "trends", "slope", "slopes", "polyfit", "regression", "linear fit", "least squares",
              "lstsq", "linregress"),
    "period": ("period", "periods", "periodicity", "cycle", "cycles", "fft", "spectrum", "spectral",
               "autocorrelation"),
}
# Quantities that answer each other: a rise is a change of means or a slope, a range a spread.
_AGREE = {frozenset(p) for p in (("change", "trend"), ("change", "mean"), ("trend", "mean"), ("change", "median"),
                                 ("trend", "median"), ("range", "spread"), ("period", "correlation"))}
_COMPARISON = re.compile(r"[<>]|\b(above|below|exceed|exceeds|exceeding|greater|less|more than|fewer|under|over|"
                         r"threshold|at least|at most|positive|negative|nonzero|equal|equals)\b")


def normal_text(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9<>%]+", " ", text.lower().replace("_", " ")).split())


_QUANTITY_PATTERNS = {q: re.compile(rf"\b(?:{'|'.join(words)})\b") for q, words in _QUANTITY_WORDS.items()}


def quantities(text: str, *, answer: bool = False) -> set[str]:
    """The quantities a normalized text names; for an `answer`, also what its comparisons count."""
    found = {q for q, pattern in _QUANTITY_PATTERNS.items() if pattern.search(text)}
    if "%" in text:
        found.add("share")
    if {"max", "min"} <= found:
        found.add("range")
    if answer and _COMPARISON.search(text):  # (values > t).sum() counts, (values > t).mean() is a share
        found |= {"count"} if "sum" in found else set()
        found |= {"share"} if found & {"mean", "count"} else set()
    return found


def agree(asked: set[str], computed: set[str]) -> bool:
    """Whether a computation of `computed` answers a question asking for `asked`."""
    return bool(asked & computed) or any(frozenset((a, c)) in _AGREE for a in asked for c in computed)


# The quantities a key can be recomputed from one series' values (`count`: the days with a value
# above 0, as in "how many days had rain").
STATISTICS: dict[str, Callable[[np.ndarray], Sequence[float]]] = {
    "mean": lambda v: [float(v.mean())],
    "median": lambda v: [float(np.median(v))],
    "max": lambda v: [float(v.max())],
    "min": lambda v: [float(v.min())],
    "sum": lambda v: [float(v.sum())],
    "range": lambda v: [float(v.max() - v.min())],
    "spread": lambda v: [float(v.std()), float(v.std(ddof=1)) if len(v) > 1 else float(v.std())],
    "count": lambda v: [float((v > 0).sum())],
}
