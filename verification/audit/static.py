"""The audit of a fixed set of items (an imported benchmark): no template to draw from again.

Each group (the benchmark's template or group id) is audited on exactly the items it holds, and
pooled per category and over the whole set:

- Position priors (`position_prior`): the position keyed most (``position``) or least
  (``least_keyed``: hand-balanced keys) often among the group's other items, leave one out,
  tested against a simulated null.
- The other blind solvers (`SOLVERS` but position, and `STATIC_SOLVERS`) answer each item of a
  group from its question and options only, fitted on the group's items before it (file order;
  the first item is answered by the solvers that need no training). Given what came before, each
  answer is right with probability 1/options when the key carries no cue, so the count right is
  tested exactly (Poisson-binomial).
- Holm's correction runs over all of them, per group and pooled (per category, overall). Every
  result states what it could detect: the accuracy it needs to be significant at ``alpha`` with
  the items it answered, and its power against a cue worth ``power_effect`` over chance.
- Item checks: exact duplicates (within the group and across the set), items of a group showing
  the same series (identical or correlated at ``near_duplicate_correlation``), and the item checks
  that mean the same without regeneration (option counts, distinct options, identical items keyed
  alike, options the question rules out, keys that are another statistic than asked).
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.schema import Item
from itemsmith.verification.audit.features import content_key
from itemsmith.verification.audit.item_checks import STATIC_ITEM_CHECKS, Drawn
from itemsmith.verification.audit.models import AuditReport, Finding, ItemDraw, SolverResult
from itemsmith.verification.audit.position_prior import POSITION_PRIORS, PriorOutcome, answer_prior
from itemsmith.verification.audit.solvers import SOLVERS, STATIC_SOLVERS, Solver
from itemsmith.verification.audit.stats import holm, poisson_binomial_sf, poisson_binomial_tail
from itemsmith.verification.settings import AuditConfig, VerificationSettings

__all__ = ["ALL_SCOPE", "GroupAudit", "PooledAudit", "StaticAuditReport", "StaticAuditor", "StaticGroup", "audit_static"]

ALL_SCOPE = "all"
# the position priors replace the sequential position solver: leave one out sees every other item
_SOLVERS: tuple[Solver, ...] = tuple(s for s in SOLVERS if s.name != "position") + STATIC_SOLVERS
_TEXTS = {**{s.name: (s.shortcut, s.fix) for s in _SOLVERS}, **{p.name: (p.shortcut, p.fix) for p in POSITION_PRIORS}}


@dataclass(frozen=True)
class StaticGroup:
    """The items of one group of a fixed item set, in their file order."""

    group: str
    category: str
    items: Sequence[Item]


class GroupAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: str
    category: str
    report: AuditReport


class PooledAudit(BaseModel):
    """The solvers over every item of a scope (a category, or ``all``) and the groups failing there."""

    model_config = ConfigDict(extra="forbid")

    scope: str
    groups: int
    items: int
    groups_failed: int
    solvers: list[SolverResult]
    failed_checks: dict[str, int] = Field(default_factory=dict, description="failed check -> groups failing it")
    duplicates: int = Field(0, description="items that repeat an earlier item of the scope exactly")

    @property
    def shortcuts(self) -> list[str]:
        return [s.solver for s in self.solvers if s.shortcut]


class StaticAuditReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    groups: list[GroupAudit]
    categories: list[PooledAudit]
    overall: PooledAudit
    alpha: float
    power_effect: float
    thresholds_lowered: list[str] = Field(default_factory=list)
    elapsed_ms: float = 0.0

    @property
    def passed(self) -> bool:
        return all(g.report.passed for g in self.groups) and not self.overall.shortcuts


@dataclass
class _Outcomes:
    """One solver's answers over a scope: right or wrong, the chance of each, what it learned."""

    correct: list[bool]
    chances: list[float]
    note: str = ""


def _answer(solver: Solver, items: Sequence[Item]) -> _Outcomes:
    outcomes = _Outcomes([], [])
    for k, item in enumerate(items):
        predict, outcomes.note = solver.fit(items[:k])
        choice = predict(item)
        if choice is not None:
            outcomes.correct.append(choice == item.answer_index)
            outcomes.chances.append(1.0 / len(item.options))
    return outcomes


def _detectable(chances: Sequence[float], alpha: float) -> int | None:
    """The fewest right answers significant at `alpha` (None: none would be)."""
    significant = np.nonzero(poisson_binomial_tail(chances) < alpha)[0]
    return int(significant[0]) if len(significant) else None


@dataclass
class _Answers:
    """What one scope's answers of one group of solvers are: sequential outcomes, or a prior's."""

    sequential: dict[str, _Outcomes]
    priors: dict[str, PriorOutcome]


def _row(name: str, n: int, right: int, expected: float, p_value: float | None, needed: int | None,
         power: float | None, total: int, note: str) -> dict:
    return {"solver": name, "applicable": n, "correct": right, "accuracy": right / n if n else None,
            "chance": expected / n if n else None, "p_value": p_value if n else None,
            "gain": (right - expected) / total if total else None, "tested": n > 0, "detail": note,
            "detectable_accuracy": None if needed is None or not n else needed / n, "power": power if n else None}


def _results(answers: _Answers, total: int, config: AuditConfig) -> list[SolverResult]:
    """Each solver against chance (exact, or simulated for the priors), Holm over those that answered."""
    rows: list[dict] = []
    notes = {p.name: p.note for p in POSITION_PRIORS}
    for name, prior in answers.priors.items():
        rows.append(_row(name, prior.applicable, prior.correct, prior.expected, prior.p_value,
                         prior.detectable(config.alpha), prior.power(config.alpha, config.power_effect), total,
                         notes[name]))
    for name, o in answers.sequential.items():
        n, right, expected = len(o.correct), sum(o.correct), sum(o.chances)
        needed = _detectable(o.chances, config.alpha) if n else None
        power = (poisson_binomial_sf(needed, [min(1.0, c + config.power_effect) for c in o.chances])
                 if needed is not None else 0.0)
        rows.append(_row(name, n, right, expected, poisson_binomial_sf(right, o.chances) if n else None, needed,
                         power, total, o.note))
    tested = [r for r in rows if r["tested"]]
    for row, adjusted in zip(tested, holm([r["p_value"] for r in tested]), strict=True):
        row["p_corrected"] = adjusted
    results = []
    for row in rows:
        adjusted = row.pop("p_corrected", None)
        shortcut = bool(adjusted is not None and adjusted < config.alpha and row["gain"] >= config.min_excess)
        results.append(SolverResult(p_corrected=adjusted, shortcut=shortcut, **row))
    return results


def _series_vector(item: Item) -> tuple[int, np.ndarray]:
    values = np.concatenate([np.asarray(s.values, dtype=float) for s in item.series])
    spread = values.std()
    return len(values), (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def _same_series(items: Sequence[Item], config: AuditConfig) -> Finding:
    """Items of the group whose series is identical to, or correlated at the threshold with, another's."""
    shown = [i for i, item in enumerate(items) if item.series]
    if len(shown) < len(items):
        return Finding(check="series", passed=False,
                       message=f"{len(items) - len(shown)} of {len(items)} items carry no series")
    exact: dict[str, list[int]] = defaultdict(list)
    by_length: dict[int, list[tuple[int, np.ndarray]]] = defaultdict(list)
    for i in shown:
        exact[json.dumps([s.values for s in items[i].series])].append(i)
        length, vector = _series_vector(items[i])
        by_length[length].append((i, vector))
    shared = {i for group in exact.values() if len(group) > 1 for i in group}
    for members in by_length.values():
        if len(members) < 2:
            continue
        index = [i for i, _ in members]
        matrix = np.stack([v for _, v in members])
        correlation = matrix @ matrix.T / matrix.shape[1]
        np.fill_diagonal(correlation, 0.0)
        shared.update(index[r] for r in np.nonzero((correlation >= config.near_duplicate_correlation).any(axis=1))[0])
    share = len(shared) / len(items)
    ok = share <= 1 - config.min_distinct_series_share
    message = (f"{len(shared)} of {len(items)} items show the same series as another item of the group "
               f"(identical or correlated at {config.near_duplicate_correlation})")
    if not ok:
        message += (f", more than {1 - config.min_distinct_series_share:.0%}: the group asks about the same data "
                    "again and again")
    return Finding(check="same_series", passed=ok, message=message)


def _duplicates(keys: Sequence[str], earlier: dict[str, str], group: str) -> Finding:
    """Items repeating an earlier item exactly (question, options, series), in the group or before it."""
    seen: set[str] = set()
    inside, elsewhere = 0, Counter[str]()
    for key in keys:
        if key in seen:
            inside += 1
        elif key in earlier and earlier[key] != group:
            elsewhere[earlier[key]] += 1
        seen.add(key)
    if not inside and not elsewhere:
        return Finding(check="duplicate_items", passed=True, message=f"no item of the {len(keys)} repeats another")
    parts = [f"{inside} of {len(keys)} items repeat an earlier item of the group"] if inside else []
    if elsewhere:
        names = ", ".join(f"{g} ({n})" for g, n in elsewhere.most_common(3))
        parts.append(f"{sum(elsewhere.values())} repeat items of other groups: {names}")
    return Finding(check="duplicate_items", passed=False,
                   message="; ".join(parts) + " (same question, options and series: drop the copies)")


def _feedback(solvers: Sequence[SolverResult], findings: Sequence[Finding]) -> str | None:
    lines = [f"- shortcut '{r.solver}': {_TEXTS[r.solver][0]} ({r.correct} of {r.applicable} right, "
             f"{r.accuracy:.0%} where chance is {r.chance:.0%}). Fix: {_TEXTS[r.solver][1]}."
             for r in solvers if r.shortcut and r.accuracy is not None and r.chance is not None]
    lines += [f"- {f.check}: {f.message}" for f in findings if not f.passed]
    return "The audit of the stored items found:\n" + "\n".join(lines) if lines else None


def _merge(into: _Answers, other: _Answers) -> None:
    """Add a group's answers to a scope's (pooled outcomes, priors summed draw by draw)."""
    for name, outcomes in other.sequential.items():
        pooled = into.sequential.setdefault(name, _Outcomes([], []))
        pooled.correct += outcomes.correct
        pooled.chances += outcomes.chances
    for name, prior in other.priors.items():
        into.priors[name] = into.priors.get(name, PriorOutcome.empty()) + prior


@dataclass
class _Scope:
    """What a pooled scope (a category, or the whole set) has gathered so far."""

    audits: list[GroupAudit]
    answers: _Answers
    duplicates: int = 0

    def pooled(self, scope: str, config: AuditConfig) -> PooledAudit:
        answers = _Answers(sequential={s.name: self.answers.sequential.get(s.name, _Outcomes([], []))
                                       for s in _SOLVERS},
                           priors={p.name: self.answers.priors.get(p.name, PriorOutcome.empty())
                                   for p in POSITION_PRIORS})
        items = sum(a.report.n_items for a in self.audits)
        failed: Counter[str] = Counter(check for a in self.audits for check in a.report.failed_checks)
        return PooledAudit(scope=scope, groups=len(self.audits), items=items,
                           groups_failed=sum(1 for a in self.audits if not a.report.passed),
                           solvers=_results(answers, items, config), failed_checks=dict(sorted(failed.items())),
                           duplicates=self.duplicates)


class StaticAuditor:
    """The audit of a fixed set, one group at a time (`add`, in the set's order), then pooled
    (`report`): a group's items can be let go once it is added."""

    def __init__(self, config: AuditConfig | None = None) -> None:
        self.config = config or VerificationSettings().audit
        self.started = time.monotonic()
        self.audits: list[GroupAudit] = []
        self.first_group: dict[str, str] = {}
        self.scopes: dict[str, _Scope] = {}

    def add(self, group: StaticGroup) -> GroupAudit:
        """Audit one group on the items it holds (duplicates: against every group added before)."""
        config, items = self.config, list(group.items)
        keys = [content_key(item) for item in items]
        outcomes = _Answers(sequential={s.name: _answer(s, items) for s in _SOLVERS},
                            priors={p.name: answer_prior(p, items, group.group) for p in POSITION_PRIORS})
        solvers = _results(outcomes, len(items), config)
        drawn = Drawn.of([ItemDraw(seed=0, num_samples=len(items), items=items)])
        findings = [_duplicates(keys, self.first_group, group.group), _same_series(items, config),
                    *(check(drawn, config) for check in STATIC_ITEM_CHECKS)]
        repeats = sum(1 for k in keys if k in self.first_group) + len(keys) - len(set(keys))
        for key in keys:
            self.first_group.setdefault(key, group.group)
        passed = not any(s.shortcut for s in solvers) and all(f.passed for f in findings)
        report = AuditReport(passed=passed, solvers=solvers, findings=findings, feedback=_feedback(solvers, findings),
                             n_items=len(items), n_distinct=len(set(keys)), seeds=[0], sizes=[len(items)],
                             alpha=config.alpha, thresholds_lowered=config.lowered())
        audit = GroupAudit(group=group.group, category=group.category, report=report)
        self.audits.append(audit)
        for scope in (group.category, ALL_SCOPE):
            pooled = self.scopes.setdefault(scope, _Scope([], _Answers({}, {})))
            pooled.audits.append(audit)
            _merge(pooled.answers, outcomes)
            pooled.duplicates += repeats
        return audit

    def report(self) -> StaticAuditReport:
        """Every group's audit, and each category and the whole set pooled."""
        config = self.config
        overall = self.scopes.get(ALL_SCOPE, _Scope([], _Answers({}, {})))
        categories = [self.scopes[c].pooled(c, config) for c in sorted({a.category for a in self.audits})]
        return StaticAuditReport(groups=self.audits, categories=categories, overall=overall.pooled(ALL_SCOPE, config),
                                 alpha=config.alpha, power_effect=config.power_effect,
                                 thresholds_lowered=config.lowered(),
                                 elapsed_ms=(time.monotonic() - self.started) * 1000)


def audit_static(groups: Sequence[StaticGroup], config: AuditConfig | None = None) -> StaticAuditReport:
    """Audit every group on the items it holds, then each category and the whole set pooled."""
    auditor = StaticAuditor(config)
    for group in groups:
        auditor.add(group)
    return auditor.report()
