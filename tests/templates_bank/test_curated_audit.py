"""Every curated template passes the item audit (verification.audit) on fresh seeds.

The audit draws a few hundred items per template over OS-random seeds and sizes through the
sandbox and runs its blind solvers (position, option length, numeric rank, closest-to-centre,
word overlap, memorization across seeds, odd format, TF wording) and item checks (distinct and
repeated items, distinct series, option counts, distinct options, key consistency, determinism).

A single audit flags a template that has no shortcut with a small probability (its Holm-corrected
level, plus solvers that are not exactly at chance); over ~80 templates that would make this test
flaky. So a failed audit is repeated once on new fresh seeds and the template fails only when
that audit fails too: a real shortcut fails both (each solver's power on ~240 items is high),
a false alarm almost never repeats. Both reports' feedback is shown on failure.

Slow (the whole bank takes minutes); marked `slow`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit import AuditReport, audit_template

TEMPLATES = load_curated()

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pools() -> Iterator[dict[str, SandboxPool]]:
    """One sandbox pool per handler, shared by the module's audits."""
    made: dict[str, SandboxPool] = {}
    yield made
    for pool in made.values():
        pool.close()


def _audit(template_id: str, pools: dict[str, SandboxPool]) -> AuditReport:
    template = TEMPLATES[template_id]
    if template.handler not in pools:
        pools[template.handler] = SandboxPool(template.handler)
    return audit_template(template.source, template.handler, pool=pools[template.handler])


def _summary(report: AuditReport) -> str:
    if report.error:
        return f"error: {report.error}"
    return f"shortcuts {report.shortcuts}, failed checks {report.failed_checks}\n{report.feedback}"


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_curated_template_passes_the_item_audit(template_id: str, pools: dict[str, SandboxPool]) -> None:
    first = _audit(template_id, pools)
    if first.passed:
        return
    second = _audit(template_id, pools)
    assert second.passed, (f"{template_id} failed two audits on fresh seeds:\n"
                           f"1st: {_summary(first)}\n2nd: {_summary(second)}")
