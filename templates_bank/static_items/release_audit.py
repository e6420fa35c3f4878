"""`itemsmith release audit`: the static audit of a release's items, per group and per category.

The release's stored items (checked against its manifest) are audited as a fixed set
(`verification.audit.static`): each template is a group, on exactly the items the release holds.
"""

from __future__ import annotations

from itertools import groupby

from itemsmith.sandbox import SandboxLimits
from itemsmith.templates_bank.releases import Release
from itemsmith.verification.audit import AuditConfig
from itemsmith.verification.audit.models import SolverResult
from itemsmith.verification.audit.static import PooledAudit, StaticAuditReport, StaticGroup, audit_static

__all__ = ["audit_release", "audit_table"]


def audit_release(release: Release, *, config: AuditConfig | None = None, workers: int = 1,
                  limits: SandboxLimits | None = None) -> StaticAuditReport:
    groups = []
    for _, runs in groupby(release.items(workers=workers, limits=limits), key=lambda pair: pair[0].template_id):
        pairs = list(runs)
        entry = pairs[0][0]
        groups.append(StaticGroup(entry.template_id, entry.category, [item for _, run in pairs for item in run.items]))
    return audit_static(groups, config)


def _solver_cell(result: SolverResult) -> str:
    if not result.applicable or result.accuracy is None or result.chance is None:
        return f"{result.solver}: abstained"
    detect = "never significant" if result.detectable_accuracy is None else f"needs {result.detectable_accuracy:.0%}"
    mark = "  SHORTCUT" if result.shortcut else ""
    return (f"{result.solver}: {result.correct}/{result.applicable} = {result.accuracy:.0%} vs chance "
            f"{result.chance:.0%}, Holm p={result.p_corrected:.2g}, {detect}, power {result.power:.2f}{mark}")


def _pooled_lines(pooled: PooledAudit) -> list[str]:
    checks = ", ".join(f"{check} {n}" for check, n in pooled.failed_checks.items()) or "none"
    lines = [f"{pooled.scope}: {pooled.groups} groups, {pooled.items} items, {pooled.groups_failed} groups failing; "
             f"exact duplicates {pooled.duplicates}; failed checks (groups): {checks}"]
    lines += [f"    {_solver_cell(s)}" for s in pooled.solvers if s.applicable]
    return lines


def audit_table(report: StaticAuditReport, *, all_groups: bool = False) -> str:
    """The report as text: overall, per category, and per group (the failing ones unless `all_groups`)."""
    lines = [f"static audit: alpha {report.alpha} (Holm over the solvers), power against a cue worth "
             f"+{report.power_effect:.0%} over chance"]
    if report.thresholds_lowered:
        lines.append(f"thresholds lowered: {', '.join(report.thresholds_lowered)}")
    lines += ["", "== overall", *_pooled_lines(report.overall), "", "== per category"]
    for category in report.categories:
        lines += _pooled_lines(category)
    shown = [g for g in report.groups if all_groups or not g.report.passed]
    lines += ["", f"== per group ({len(shown)} of {len(report.groups)} shown{'' if all_groups else ': failing'})"]
    for group in shown:
        r = group.report
        lines.append(f"{group.group} [{group.category}] {r.n_items} items: {'passed' if r.passed else 'FAILED'}")
        lines += [f"    {_solver_cell(s)}" for s in r.solvers if s.shortcut or (all_groups and s.applicable)]
        lines += [f"    {f.check}: {f.message}" for f in r.findings if not f.passed]
    return "\n".join(lines)
