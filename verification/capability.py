"""Capability-aligned filtering (TimeSeriesExamAgent, after the expertise reversal effect).

Per template: accuracy of each student over the template's sampled items (with the series),
against the students' declared capability ranks. With a handful of items a plain "the weaker
model scored higher" is mostly noise, so the statistic is Spearman's rank correlation between
capability rank and accuracy, with a percentile bootstrap interval that resamples the items
(paired across students). The outcomes, checked in this order:

- ``all_poor``: no student is above chance (one-sided binomial test per student, Holm-corrected
  over the pool): a hard template, kept.
- ``flat``: every student has the same accuracy (all right, all wrong, ...): no capability
  signal; kept by default, IRT flags saturated templates later.
- ``reversal``: the whole interval is below zero: weaker students reliably beat stronger ones,
  the template is likely flawed or mis-keyed: discarded.
- ``rising``: the whole interval is above zero: kept.
- ``inconclusive``: the interval straddles zero: kept by default.

Which outcomes are kept is configurable (`CapabilityConfig.keep`), and a template that the
student pool's blind check flagged (its data is not needed) is discarded unless
``reject_blind=False``. Every verdict records the accuracies, the statistic and its interval.

Whether a ladder orders at all on a corpus (`ladder_auc`) is what decides if its verdicts mean
anything (`agents.stages.ladder_validation`): a ladder whose students are all at chance reads
`all_poor`, `flat` or `inconclusive` on every template and keeps whatever it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from scipy.stats import binomtest, rankdata

from itemsmith.items.schema import CapabilityVerdict, Decision
from itemsmith.verification.audit.stats import holm
from itemsmith.verification.judges import separation_auc
from itemsmith.verification.stage_configs import CapabilityConfig, Outcome
from itemsmith.verification.students import StudentReport

__all__ = ["CapabilityConfig", "CapabilityReport", "Outcome", "assess", "assess_all", "ladder_auc", "rank_correlation"]


class CapabilityReport(BaseModel):
    """The capability verdict on one template, its outcome and the decision."""

    template_id: str
    outcome: Outcome
    verdict: CapabilityVerdict
    n_items: int
    chance: float
    decision: Decision


def rank_correlation(ranks: np.ndarray, accuracies: np.ndarray) -> np.ndarray:
    """Spearman's rho between one rank vector (students) and each row of ``accuracies``
    (replicates x students), ties averaged; 0 for a row without variation."""
    x = rankdata(ranks)
    y = rankdata(np.atleast_2d(accuracies), axis=1)
    x, y = x - x.mean(), y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((x**2).sum() * (y**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (y @ x) / denominator, 0.0)


def _matrix(report: StudentReport) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Students, their ranks, and the students x items matrix of correct answers (NaN: none)."""
    seen = [r for r in report.responses if not r.blind]
    students = list(dict.fromkeys(r.student for r in seen))
    ranks = {r.student: r.rank for r in seen}
    matrix = np.full((len(students), report.n_items), np.nan)
    for r in seen:
        matrix[students.index(r.student), r.item_index] = float(r.correct)
    return students, np.array([ranks[s] for s in students], dtype=float), matrix


def assess(report: StudentReport, config: CapabilityConfig | None = None) -> CapabilityReport:
    """The capability-aligned verdict on one template's student responses."""
    config = config or CapabilityConfig()
    students, ranks, matrix = _matrix(report)
    answered = (~np.isnan(matrix)).sum(axis=1)
    correct = np.nansum(matrix, axis=1)
    accuracy = correct / np.maximum(answered, 1)
    accuracies = {s: float(a) for s, a in zip(students, accuracy, strict=True)}
    p_values = [binomtest(int(k), int(n), report.chance, alternative="greater").pvalue if n else 1.0
                for k, n in zip(correct, answered, strict=True)]
    above = [s for s, p in zip(students, holm(p_values), strict=True) if p < config.chance_alpha]

    statistic: float | None = None
    interval: tuple[float, float] | None = None
    if len(set(ranks)) < 2:
        outcome, reason = Outcome.inconclusive, "fewer than two capability ranks in the pool: no statistic"
    elif not above:
        outcome = Outcome.all_poor
        reason = f"no student is above chance {report.chance:.2f} (best {accuracy.max():.2f}): a hard template"
    elif np.ptp(accuracy) == 0:
        outcome, reason = Outcome.flat, f"every student scored {accuracy[0]:.2f}: no capability signal"
    else:
        statistic = float(rank_correlation(ranks, accuracy)[0])
        rng = np.random.default_rng(config.seed)
        picks = rng.integers(0, report.n_items, size=(config.bootstrap, report.n_items))
        with np.errstate(invalid="ignore"):
            resampled = np.nanmean(matrix[:, picks], axis=2).T  # replicates x students
        rhos = rank_correlation(ranks, np.nan_to_num(resampled, nan=0.0))
        tail = (1 - config.interval_level) / 2 * 100
        low, high = (float(v) for v in np.percentile(rhos, [tail, 100 - tail]))
        interval = (low, high)
        level = f"{config.interval_level:.0%} interval [{low:.2f}, {high:.2f}]"
        if high < 0:
            outcome, reason = Outcome.reversal, f"weaker students beat stronger ones: rho {statistic:.2f}, {level}"
        elif low > 0:
            outcome, reason = Outcome.rising, f"accuracy rises with capability: rho {statistic:.2f}, {level}"
        else:
            outcome, reason = Outcome.inconclusive, f"no clear order: rho {statistic:.2f}, {level}"

    blind_flag = report.blind is not None and report.blind.flagged
    reasons = [f"{outcome.value}: {reason}"]
    accepted = config.keep[outcome]
    if blind_flag and report.blind is not None:
        reasons.append(f"blind: {report.blind.reason}")
        accepted = accepted and not config.reject_blind
    verdict = CapabilityVerdict(accuracies=accuracies, statistic=statistic, interval=interval,
                                reversal=outcome is Outcome.reversal, blind_flag=blind_flag, reason="; ".join(reasons))
    return CapabilityReport(template_id=report.template_id, outcome=outcome, verdict=verdict, n_items=report.n_items,
                            chance=report.chance,
                            decision=Decision(accepted=accepted, stage="capability", reasons=reasons))


def assess_all(reports: Sequence[StudentReport], config: CapabilityConfig | None = None) -> list[CapabilityReport]:
    """`assess` for each template's report, in order."""
    return [assess(report, config) for report in reports]


def ladder_auc(reports: Sequence[StudentReport]) -> tuple[float | None, int]:
    """How well a ladder orders over `reports` (one a template): the probability that, on one
    template, a student of a higher rank is more accurate with the series than one of a lower rank,
    ties half (each such pair's `separation_auc`, averaged), and the number of pairs it averages.
    0.5: the ranks say nothing (a ladder at chance); 1: every stronger student beats every weaker
    one. None when no template has students of two ranks."""
    pairs: list[float] = []
    for report in reports:
        students, ranks, matrix = _matrix(report)
        answered = (~np.isnan(matrix)).sum(axis=1)
        accuracy = np.nansum(matrix, axis=1) / np.maximum(answered, 1)
        pairs += [separation_auc([float(accuracy[high])], [float(accuracy[low])]) or 0.0
                  for high in range(len(students)) for low in range(len(students)) if ranks[high] > ranks[low]]
    return (sum(pairs) / len(pairs) if pairs else None), len(pairs)
