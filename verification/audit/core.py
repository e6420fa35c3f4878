"""`audit_items`: blind solvers and item checks over items already drawn (no sandbox)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

from itemsmith.items.schema import Item
from itemsmith.verification.audit.fidelity import check_fidelity
from itemsmith.verification.audit.item_checks import Drawn, check_items
from itemsmith.verification.audit.models import AuditReport, Finding, ItemDraw, SolverResult
from itemsmith.verification.audit.record_data import RecordData
from itemsmith.verification.audit.solvers import SOLVERS, Solver
from itemsmith.verification.audit.stats import holm, poisson_binomial_sf
from itemsmith.verification.settings import AuditConfig, VerificationSettings

__all__ = ["audit_items", "confirm_shortcuts"]


def _folds(drawn: Drawn) -> list[list[Item]]:
    """Items grouped by seed, in the order the seeds were drawn; one seed is split in two.

    An item repeated under one seed (a seed run at several sizes repeats its items) counts
    once: the test assumes independent items.
    """
    groups: dict[int, dict[tuple[str, str], Item]] = defaultdict(dict)
    for draw, keys in zip(drawn.draws, drawn.keys, strict=True):
        for item, key in zip(draw.items, keys, strict=True):
            groups[draw.seed].setdefault((key, item.answer), item)
    folds = [list(g.values()) for g in groups.values() if g]
    if len(folds) == 1:
        only = folds[0]
        folds = [only[0::2], only[1::2]]
    return [f for f in folds if f]


def _held_out(solver: Solver, folds: list[list[Item]]) -> tuple[list[bool], list[float], str]:
    """Each fold answered by the solver fitted on the folds before it (the first fold only trains).

    Fitting on earlier folds only keeps the exact test valid: given what came before, a fold's
    outcomes are independent draws at chance when the template has no shortcut. Fitting each fold
    on all the others (cross-fitting) is not: two folds that lean the same way by chance each
    teach the other's solver their lean, so the correct count varies about twice as much as the
    binomial test assumes and a template without a shortcut fails far more often than alpha says.
    """
    outcomes: list[bool] = []
    chances: list[float] = []
    note = ""
    for k in range(1, len(folds)):
        predict, learned = solver.fit([item for fold in folds[:k] for item in fold])
        note = learned
        for item in folds[k]:
            choice = predict(item)
            if choice is not None:
                outcomes.append(choice == item.answer_index)
                chances.append(1.0 / len(item.options))
    return outcomes, chances, note


def _test_solvers(folds: list[list[Item]], config: AuditConfig) -> list[SolverResult]:
    total = sum(len(f) for f in folds[1:])  # the items answered (the first fold only trains)
    rows: list[dict] = []
    for solver in SOLVERS:
        outcomes, chances, note = _held_out(solver, folds)
        n, correct = len(outcomes), sum(outcomes)
        tested = n >= config.min_applicable
        rows.append({
            "solver": solver.name, "applicable": n, "correct": correct,
            "accuracy": correct / n if n else None, "chance": sum(chances) / n if n else None,
            "p_value": poisson_binomial_sf(correct, chances) if tested else None,
            "gain": (correct - sum(chances)) / total if total else None, "tested": tested, "detail": note,
        })
    tested_rows = [r for r in rows if r["tested"]]
    for row, adjusted in zip(tested_rows, holm([r["p_value"] for r in tested_rows]), strict=True):
        row["p_corrected"] = adjusted
    results = []
    for row in rows:
        adjusted = row.pop("p_corrected", None)
        shortcut = bool(row["tested"] and adjusted is not None and adjusted < config.alpha
                        and row["gain"] >= config.min_excess)
        results.append(SolverResult(p_corrected=adjusted, shortcut=shortcut, **row))
    return results


def _feedback(solvers: list[SolverResult], findings: list[Finding]) -> str | None:
    by_name = {s.name: s for s in SOLVERS}
    lines = []
    for result in solvers:
        if result.shortcut:
            solver = by_name[result.solver]
            lines.append(f"- shortcut '{result.solver}': {solver.shortcut} (a blind solver that never sees the series "
                         f"answers {result.correct} of {result.applicable} items right, {result.accuracy:.0%} where "
                         f"chance is {result.chance:.0%}; {result.detail}). Fix: {solver.fix}.")
    for finding in findings:
        if not finding.passed:
            lines.append(f"- {finding.check}: {finding.message}")
    if not lines:
        return None
    if any(result.shortcut for result in solvers):
        return "The item audit found answers that do not need the data:\n" + "\n".join(lines)
    return "The item audit found items whose data, keys or options are wrong:\n" + "\n".join(lines)


def audit_items(draws: Sequence[ItemDraw], config: AuditConfig | None = None,
                records: RecordData | None = None) -> AuditReport:
    """Audit the items of several runs of one template (each draw: seed, num_samples, items).

    Pure: it never runs template code. Fewer valid items than `config.min_items` fail the
    template with a message saying so. With `records` (the handler data the items name, read in
    the sandbox), data fidelity is checked too.
    """
    started = time.monotonic()
    config = config or VerificationSettings().audit
    items = [item for draw in draws for item in draw.items]
    common = {"seeds": [d.seed for d in draws], "sizes": [d.num_samples for d in draws],
              "alpha": config.alpha, "thresholds_lowered": config.lowered(), "n_items": len(items)}
    if len(items) < config.min_items:
        message = (f"too few items to audit: {len(items)} drawn, at least {config.min_items} are needed; "
                   "question(num_samples) must return num_samples items")
        finding = Finding(check="enough_items", passed=False, message=message)
        return AuditReport(passed=False, findings=[finding], feedback=_feedback([], [finding]),
                           elapsed_ms=(time.monotonic() - started) * 1000, **common)
    drawn = Drawn.of(draws)
    findings = check_items(drawn, config)
    if records is not None:
        findings.append(check_fidelity(items, records))
    solvers = _test_solvers(_folds(drawn), config)
    n_distinct = len(set(drawn.all_keys))
    passed = not any(s.shortcut for s in solvers) and all(f.passed for f in findings)
    return AuditReport(passed=passed, solvers=solvers, findings=findings, feedback=_feedback(solvers, findings),
                       n_distinct=n_distinct, elapsed_ms=(time.monotonic() - started) * 1000, **common)


def confirm_shortcuts(report: AuditReport, draws: Sequence[ItemDraw], confirmation: Sequence[ItemDraw],
                      config: AuditConfig | None = None) -> AuditReport:
    """`report` (the audit of `draws`) with its shortcuts tested again on `draws` plus `confirmation`
    (fresh seeds drawn because a blind solver won on `draws`): a shortcut stands only where the
    pooled test finds it too.

    Each solver's test is exact at alpha, yet a sound template loses one of them now and then:
    with a few hundred items, one lucky seed order lets `position` or `numeric_rank` gain the 10 %
    `min_excess` asks (measured: 2 in 691 audits of a sound template). Pooling keeps every earlier
    outcome and adds as many new ones, so a chance win must be matched by a second one (the pooled
    gain halves otherwise), while a real cue gains on the new seeds as it did on the first. Under no
    shortcut this rejects no more often than `report` alone did: both tests must find it.
    """
    if not report.shortcuts or not confirmation:
        return report
    config = config or VerificationSettings().audit
    first = set(report.shortcuts)
    solvers = [result.model_copy(update={"shortcut": result.shortcut and result.solver in first})
               for result in _test_solvers(_folds(Drawn.of([*draws, *confirmation])), config)]
    passed = not any(s.shortcut for s in solvers) and all(f.passed for f in report.findings)
    return report.model_copy(update={
        "solvers": solvers, "passed": passed, "feedback": _feedback(solvers, report.findings),
        "confirmation_seeds": [d.seed for d in confirmation], "confirmation_sizes": [d.num_samples for d in confirmation],
    })
