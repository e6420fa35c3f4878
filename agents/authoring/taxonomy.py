"""The concept taxonomy the planner spreads templates over (templates_bank/curated/README.md)."""

from __future__ import annotations

import re
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
# on real data before any category repeats: first those a reasoning block answers (a trend, an
# unusual day, a comparison, a shift's date, a volatile stretch, a lead), then reading values off.
COVERAGE_ORDER: tuple[str, ...] = (
    "pattern_recognition", "anomaly_detection", "similarity_analysis", "temporal_relation", "noise_understanding",
    "causality", "arithmetic", "retrieval", "domain_reasoning", "transformation",
)

# Words of a task description that ask for a category: a task that names them gets those first.
TASK_WORDS: dict[str, str] = {
    "pattern_recognition": r"trends?|trending|seasonal\w*|patterns?|cycles?|periodic\w*|rising|falling|shape",
    "noise_understanding": r"volatil\w*|noise|noisy|erratic|variab\w*|spread|stable|stability",
    "similarity_analysis": r"similar\w*|alike|compar\w*|correlat\w*|relations?|relationships?|versus|vs",
    "anomaly_detection": r"anomal\w*|unusual|outliers?|extremes?|spikes?|odd|abnormal|rare",
    "causality": r"leads?|lags?|causal\w*|cause|drives?|precedes?|moves? first",
    "temporal_relation": r"when|dates?|timing|shifts?|breaks?|changes? point|onset",
    "arithmetic": r"counts?|how many|averages?|means?|totals?|sums?|arithmetic",
    "retrieval": r"look ?up|read off|retriev\w*|values? on",
    "domain_reasoning": r"labels?|class\w*|domain|clinical|diagnos\w*",
    "transformation": r"transform\w*|differenc\w*|smooth\w*|scaled?",
}


# Words of a task description that ask for a concept: among the blocks of one category, those of the
# concepts the task names come first ("how temperature and wind correlate": the correlation, not a
# comparison of records).
CONCEPT_WORDS: dict[str, str] = {
    "trend": r"trends?|trending|rising|falling|increasing|decreasing|slopes?",
    "seasonality": r"seasonal\w*|seasons?|weekdays?|day of the week|time of (?:the )?year|cycles?|periodic\w*",
    "anomaly": r"anomal\w*|unusual|outliers?|spikes?|abnormal",
    "structural_break": r"shifts?|breaks?|level changes?|regime changes?|jumps?",
    "comparison": r"compar\w*|versus|vs|higher than|lower than|which records?",
    "correlation": r"correlat\w*|move together|co-?move\w*|relations?|relationships?|associat\w*",
    "similarity": r"similar\w*|alike|resembl\w*|shapes?",
    "cross_correlation": r"leads?|lags?|moves? first|precedes?|ahead",
    "volatility": r"volatil\w*|erratic|calm|turbulen\w*|variab\w*",
}


def task_concepts(task: str) -> set[str]:
    """The concepts a task description asks for by name."""
    text = task.lower()
    return {c for c, words in CONCEPT_WORDS.items() if re.search(rf"\b({words})\b", text)}


def task_categories(task: str) -> list[str]:
    """The categories a task description asks for by name, in `COVERAGE_ORDER`."""
    text = task.lower()
    return [c for c in COVERAGE_ORDER if re.search(rf"\b({TASK_WORDS[c]})\b", text)]


def coverage_plan(n: int, *, multichannel: bool = True, task: str = "") -> list[str]:
    """N categories, cycling through `COVERAGE_ORDER` (causality needs two channels); the categories
    the task asks for (`task_categories`) take the first half of the slots (at least one each), the
    rest go on in coverage order."""
    usable = [c for c in COVERAGE_ORDER if multichannel or c != "causality"]
    wanted = [c for c in task_categories(task) if c in usable]
    first = [wanted[i % len(wanted)] for i in range(min(n, max(len(wanted), (n + 1) // 2)))] if wanted else []
    rest = [c for c in usable if c not in first] or usable
    return first + [rest[i % len(rest)] for i in range(n - len(first))]
