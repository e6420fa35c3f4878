"""`audit_items`: blind solvers and item checks over items already drawn (no sandbox)."""

from __future__ import annotations

import math
import time
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from itemsmith.items.schema import Item
from itemsmith.verification.audit.fidelity import check_fidelity, named_record_ids
from itemsmith.verification.audit.item_checks import STATISTICAL_CHECKS, Drawn, check_items, short
from itemsmith.verification.audit.models import AuditReport, Finding, ItemDraw, SolverResult
from itemsmith.verification.audit.pool import item_pool
from itemsmith.verification.audit.record_data import RecordData
from itemsmith.verification.audit.solvers import SOLVERS, Solver
from itemsmith.verification.audit.stats import holm, poisson_binomial_sf
from itemsmith.verification.settings import AuditConfig, VerificationSettings

__all__ = ["audit_items", "confirm_rejection"]


def _folds(drawn: Drawn) -> list[list[tuple[str, Item]]]:
    """(content key, item) grouped by seed, in the order the seeds were drawn; one seed is split in two.

    An item repeated under one seed (a seed run at several sizes repeats its items) counts
    once: the test assumes independent items.
    """
    groups: dict[int, dict[tuple[str, str], tuple[str, Item]]] = defaultdict(dict)
    for draw, keys in zip(drawn.draws, drawn.keys, strict=True):
        for item, key in zip(draw.items, keys, strict=True):
            groups[draw.seed].setdefault((key, item.answer), (key, item))
    folds = [list(g.values()) for g in groups.values() if g]
    if len(folds) == 1:
        only = folds[0]
        folds = [only[0::2], only[1::2]]
    return [f for f in folds if f]


def _about(item: Item, content: str, held_out: str) -> frozenset[str]:
    """What a solver must not have learned from to answer an item: the item itself ("content"), or
    the records it names ("record"; the item itself when it names none)."""
    named = named_record_ids(item) if held_out == "record" else []
    return frozenset(f"record {r}" for r in named) if named else frozenset({f"item {content}"})


@dataclass
class _Answered:
    outcomes: list[bool] = field(default_factory=list)
    chances: list[float] = field(default_factory=list)
    note: str = ""
    example: str = ""
    held_out: int = 0  # the items it was asked (it abstains where its cue does not exist)

    def add(self, item: Item, choice: int | None) -> None:
        self.held_out += 1
        if choice is None:
            return
        self.outcomes.append(choice == item.answer_index)
        self.chances.append(1.0 / len(item.options))
        if choice == item.answer_index and not self.example:
            self.example = f"{short(item.question)!r}, options {item.options}: it picked {item.options[choice]!r}"


def _half(about: frozenset[str]) -> int | None:
    """The half (0 or 1) every record of an item falls in, by a stable hash; None when it names both."""
    halves = {zlib.crc32(a.encode()) % 2 for a in about}
    return halves.pop() if len(halves) == 1 else None


def _held_out(solver: Solver, folds: list[list[tuple[str, Item]]]) -> _Answered:
    """Each fold answered by the solver fitted on the folds before it (the first fold only trains),
    leaving out the items it learned from: the same items (a small pool repeats items across seeds)
    or, for a solver held out by record, items of the records it learned from. What a solver
    remembers of a record (its values, its usual keys) is knowledge of that record's data, not a
    cue in the text; on records it never saw, only a cue that holds whatever the data wins.

    A solver held out by record learns from the earlier folds' items of one half of the records
    (a stable hash of the record ids) and answers the fold's items of the other half, both ways
    round. Learning from every earlier fold would leave it, on a dataset of a few dozen records,
    only the items of records no earlier seed happened to name: about as many as the test needs,
    so whether it is tested at all would change from one audit to the next.

    Fitting on earlier folds only keeps the exact test valid: given what came before, a fold's
    outcomes are independent draws at chance when the template has no shortcut. Fitting each fold
    on all the others (cross-fitting) is not: two folds that lean the same way by chance each
    teach the other's solver their lean, so the correct count varies about twice as much as the
    binomial test assumes and a template without a shortcut fails far more often than alpha says.
    """
    answered = _Answered()
    halves = (0, 1) if solver.held_out == "record" else (None,)
    earlier: list[tuple[frozenset[str], Item]] = []
    for k in range(1, len(folds)):
        earlier += [(_about(item, key, solver.held_out), item) for key, item in folds[k - 1]]
        fitted = []
        for half in halves:
            train = [(about, item) for about, item in earlier if half is None or _half(about) == half]
            predict, answered.note = solver.fit([item for _, item in train])
            fitted.append((predict, set().union(*(about for about, _ in train))))
        for key, item in folds[k]:
            about = _about(item, key, solver.held_out)
            for predict, seen in fitted:
                if not about & seen:
                    answered.add(item, predict(item))
                    break
    return answered


def _test_solvers(folds: list[list[tuple[str, Item]]], config: AuditConfig, *, bounded: bool = False
                  ) -> list[SolverResult]:
    """Each blind solver's held-out accuracy against chance (exact, Holm over the solvers). A shortcut
    is significant and gains `min_excess`; `bounded` (the confirmation, on twice the items): the gain's
    lower confidence bound (`excess_z`) must clear it, so that a cue worth about the bar is no finding
    either way instead of one in half of the runs."""
    rows: list[dict] = []
    for solver in SOLVERS:
        answered = _held_out(solver, folds)
        chances = answered.chances
        n, correct, total = len(answered.outcomes), sum(answered.outcomes), answered.held_out
        tested = n >= config.min_applicable
        spread = math.sqrt(correct * (n - correct) / n) if n else 0.0  # the correct count's standard error
        rows.append({
            "solver": solver.name, "applicable": n, "correct": correct,
            "accuracy": correct / n if n else None, "chance": sum(chances) / n if n else None,
            "p_value": poisson_binomial_sf(correct, chances) if tested else None,
            "gain": (correct - sum(chances)) / total if total else None, "tested": tested, "detail": answered.note,
            "gain_lower": (correct - sum(chances) - config.excess_z * spread) / total if total else None,
            "held_out": solver.held_out, "example": answered.example,
        })
    tested_rows = [r for r in rows if r["tested"]]
    for row, adjusted in zip(tested_rows, holm([r["p_value"] for r in tested_rows]), strict=True):
        row["p_corrected"] = adjusted
    results = []
    for row in rows:
        adjusted = row.pop("p_corrected", None)
        shortcut = bool(row["tested"] and adjusted is not None and adjusted < config.alpha
                        and row["gain_lower" if bounded else "gain"] >= config.min_excess)
        results.append(SolverResult(p_corrected=adjusted, shortcut=shortcut, **row))
    return results


_HEADINGS = {
    "wrong": "Wrong: items whose key, data, dates or options disagree with the question on the data shown",
    "without_data": "Answerable without the data: a solver that never sees the series answers items of records "
                    "it never learned from",
}


def _feedback(solvers: list[SolverResult], findings: list[Finding]) -> str | None:
    """Each failed check and winning solver under the kind of finding it is, with an item."""
    by_name = {s.name: s for s in SOLVERS}
    sections: dict[str, list[str]] = {kind: [] for kind in _HEADINGS}
    for finding in findings:
        if not finding.passed and finding.kind in sections:
            sections[finding.kind].append(f"- {finding.check}: {finding.message}")
    for result in solvers:
        if result.shortcut:
            solver = by_name[result.solver]
            sections["without_data"].append(
                f"- shortcut '{result.solver}': {solver.shortcut} (without the series it answers {result.correct} of "
                f"{result.applicable} held-out items right, {result.accuracy:.0%} where chance is {result.chance:.0%}; "
                f"{result.detail}; e.g. {result.example}). Fix: {solver.fix}.")
    parts = [f"{_HEADINGS[kind]}:\n" + "\n".join(lines) for kind, lines in sections.items() if lines]
    return "\n".join(parts) if parts else None


def _passed(solvers: list[SolverResult], findings: list[Finding]) -> bool:
    return not any(s.shortcut for s in solvers) and all(f.passed for f in findings if f.kind != "pool")


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
        findings.append(check_fidelity(items, records, config))
    solvers = _test_solvers(_folds(drawn), config)
    return AuditReport(passed=_passed(solvers, findings), solvers=solvers, findings=findings,
                       feedback=_feedback(solvers, findings), n_distinct=len(set(drawn.all_keys)),
                       pool=item_pool(drawn, config),
                       elapsed_ms=(time.monotonic() - started) * 1000, **common)


def undecided(first: AuditReport, confirmed: AuditReport, config: AuditConfig) -> list[str]:
    """The blind solvers that won in `first` whose pooled win in `confirmed` (`confirm_rejection`) is
    significant and gains `min_excess` while its lower confidence bound does not: more items would
    tell which side of the bar the cue is on."""
    return [result.solver for result in confirmed.solvers
            if result.solver in first.shortcuts and not result.shortcut
            and result.p_corrected is not None and result.p_corrected < config.alpha
            and result.gain is not None and result.gain_lower is not None
            and result.gain_lower < config.min_excess <= result.gain]


def confirm_rejection(report: AuditReport, draws: Sequence[ItemDraw], confirmation: Sequence[ItemDraw],
                      config: AuditConfig | None = None) -> AuditReport:
    """`report` (the audit of `draws`, failed) with its rejection tested again on `draws` plus
    `confirmation` (fresh seeds drawn because it failed): a shortcut, or a failed item check, stands
    only where the pooled test finds it too.

    Each solver's test is exact at alpha, yet a sound template loses one of them now and then:
    with a few hundred items, one lucky seed order lets `position` or `numeric_rank` gain the 10 %
    `min_excess` asks (measured: 2 in 691 audits of a sound template). Pooling keeps every earlier
    outcome and adds as many new ones, so a chance win must be matched by a second one (the pooled
    gain halves otherwise), while a real cue gains on the new seeds as it did on the first; and on
    the pooled items the gain's lower confidence bound must clear the bar (a cue worth about the bar
    is no finding either way, where the gain itself would flip with the draw). An item
    check that counts a share of items (`STATISTICAL_CHECKS`: keys that are no reading of the asked
    statistic) must fail again on the fresh seeds alone, so a verdict near a threshold does not flip
    from one run to the next; a check that failed on an item showing its flaw stands (that item
    proves it). Under no flaw this rejects no more often than `report` alone did: both must find it.
    """
    if report.passed or not confirmation:
        return report
    config = config or VerificationSettings().audit
    first = set(report.shortcuts)
    drawn = Drawn.of([*draws, *confirmation])
    solvers = [result.model_copy(update={"shortcut": result.shortcut and result.solver in first})
               for result in _test_solvers(_folds(drawn), config, bounded=True)]
    again = {finding.check: finding for finding in check_items(Drawn.of(confirmation), config)
             if finding.check in STATISTICAL_CHECKS}
    findings = [finding.model_copy(update={
        "passed": True, "message": f"not confirmed on fresh seeds: {again[finding.check].message} (first: "
                                   f"{finding.message})"})
                if not finding.passed and finding.check in again and again[finding.check].passed else finding
                for finding in report.findings]
    return report.model_copy(update={
        "solvers": solvers, "findings": findings, "passed": _passed(solvers, findings),
        "feedback": _feedback(solvers, findings),
        "confirmation_seeds": [d.seed for d in confirmation], "confirmation_sizes": [d.num_samples for d in confirmation],
    })
