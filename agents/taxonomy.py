"""The concept taxonomy the planner spreads templates over (templates_bank/curated/README.md)."""

from __future__ import annotations

from typing import get_args

from itemsmith.templates_bank.curated import Category

CATEGORIES: tuple[str, ...] = get_args(Category)

CATEGORY_HINTS: dict[str, str] = {
    "pattern_recognition": "identify a shape: trend direction, seasonality, periodic pattern, level",
    "noise_understanding": "volatility, noise level, smoothness, spread of values",
    "similarity_analysis": "compare two or more series or windows: which is most alike / different",
    "anomaly_detection": "find or detect a spike, drop, outlier, unusual window or labelled anomaly",
    "causality": "lead/lag between two channels: which moves first",
    "transformation": "which series is a transformed version (differenced, smoothed, scaled) of another",
    "temporal_relation": "when something happens: the date/time/window of a peak, crossing, change",
    "retrieval": "read a value or label off the data: the value on a date, the record with a property",
    "arithmetic": "count or compute: number of days above a threshold, a mean, a difference, a range",
    "domain_reasoning": "use the dataset's labels and domain meaning (e.g. clinical range, weather class)",
}

# Feature families of Fons et al., then the task kinds (the concept tags of the curated bank).
CONCEPTS: tuple[str, ...] = (
    "trend", "seasonality", "anomaly", "volatility", "structural_break", "stationarity", "fat_tails",
    "correlation", "cross_correlation", "dynamic_correlation", "noise", "causality", "transformation",
    "similarity", "temporal_order",
)
TASK_KINDS: tuple[str, ...] = (
    "detection", "classification", "retrieval", "arithmetic", "description_matching", "comparison", "ordering",
)

# The order categories are handed out in, so that N briefs cover N different kinds of reasoning
# on real data before any category repeats.
COVERAGE_ORDER: tuple[str, ...] = (
    "arithmetic", "temporal_relation", "anomaly_detection", "pattern_recognition", "retrieval",
    "domain_reasoning", "similarity_analysis", "noise_understanding", "causality", "transformation",
)


def coverage_plan(n: int, *, multichannel: bool = True) -> list[str]:
    """N categories, cycling through `COVERAGE_ORDER` (causality needs two channels)."""
    order = [c for c in COVERAGE_ORDER if multichannel or c != "causality"]
    return [order[i % len(order)] for i in range(n)]
