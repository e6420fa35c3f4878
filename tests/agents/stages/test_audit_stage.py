"""The item audit in the authoring loop (scripted models, real sandbox): it runs on every template
right after the structure check and before any other stage, its rejection names the shortcut
and the fix for the generator, and the later stages see items from a fresh seed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.items.schema import Decision, Item, StructureReport
from itemsmith.sandbox import SandboxPool

from ..conftest import GOOD, SHORTCUT, fenced, plan_reply, scripted


def _author(pool: SandboxPool, handler_file: Path, tmp_path: Path, replies: list[str], **overrides: Any):
    generator = scripted(replies)
    config = AuthorConfig(handler=str(handler_file), task="Questions about water levels", templates=1, slots=1,
                          out_dir=tmp_path / "out", checkpoint="memory", run_id="audited")
    report = asyncio.run(author(config, generator_model=generator, planner_model=scripted([plan_reply(["Level"])]),
                                pool=pool, **overrides))
    return report, generator.model


def test_a_shortcut_is_rejected_by_the_audit_and_its_fix_fed_back(pool, handler_file, tmp_path) -> None:
    report, model = _author(pool, handler_file, tmp_path, [fenced(SHORTCUT), fenced(GOOD)])
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["verify_rejected", "ok"]
    rejected = slot.attempts[0].verification[0]
    assert rejected.decision.stage == "audit" and not rejected.decision.accepted
    assert rejected.audit is not None and "numeric_rank" in rejected.audit.shortcuts
    assert len(set(rejected.audit.seeds)) >= 8 and 0 not in rejected.audit.seeds  # fresh, recorded seeds
    prompt = model.prompts[1]
    assert "Answerable without the data" in prompt and "numeric_options(" in prompt
    accepted = slot.attempts[1].verification
    assert accepted[0].decision.stage == "audit" and accepted[0].audit.passed
    assert slot.decision is not None and any(r.startswith("audit: audit passed") for r in slot.decision.reasons)
    assert any("not configured" in r for r in slot.decision.reasons)  # no content stage: pass-through after it
    summary = report.summary()["verification"]
    assert summary["acceptance_by_stage"]["audit"] == {"checked": 2, "passed": 1, "rate": 0.5}
    assert summary["audit_rejections"]["numeric_rank"] == 1


def test_later_stages_see_items_of_a_fresh_seed(pool, handler_file, tmp_path) -> None:
    seen: list[StructureReport] = []

    async def judge(source: str, report: StructureReport) -> VerificationResult:
        seen.append(report)
        return VerificationResult(decision=Decision(accepted=True, stage="judges", reasons=["fine"]))

    report, _ = _author(pool, handler_file, tmp_path, [fenced(GOOD)], verifiers=[judge])
    audit_result = report.slots[0].attempts[0].verification[0]
    assert audit_result.decision.stage == "audit" and audit_result.review_seed is not None
    shown = seen[0]
    assert audit_result.review_seed not in shown.seeds  # not the structure check's seed
    checked = pool.run(GOOD, num_samples=shown.num_samples, seed=shown.seeds[0])
    assert [Item.model_validate(i) for i in checked.items] != shown.items
    again = pool.run(GOOD, num_samples=len(shown.items), seed=audit_result.review_seed)
    assert [Item.model_validate(i) for i in again.items] == shown.items == audit_result.review_items


def test_a_template_keyed_on_the_clock_never_reaches_the_judges(pool, handler_file, tmp_path) -> None:
    clocked = GOOD.replace("float(window.mean())", "float(window.mean()) + datetime.datetime.now().second % 2")
    calls: list[str] = []

    async def judge(source: str, report: StructureReport) -> VerificationResult:
        calls.append(source)
        return VerificationResult(decision=Decision(accepted=True, stage="judges"))

    report, _ = _author(pool, handler_file, tmp_path, [fenced(clocked)], verifiers=[judge])
    slot = report.slots[0]
    assert slot.status == "discarded" and not calls
    assert all("not available in templates" in (a.error or "") for a in slot.attempts)


def test_the_later_stages_get_at_least_twenty_items_whatever_the_check_drew(pool, handler_file) -> None:
    """The students' capability verdict needs enough items: the review draw is at least
    `review_items` (20 by default) even when the structure check drew 4."""
    from itemsmith.agents.stages.verification_stages import ItemAuditVerifier
    from itemsmith.verification.structure import check_structure

    report = check_structure(GOOD, str(handler_file), num_samples=4, seed=5, pool=pool)
    result = asyncio.run(ItemAuditVerifier(str(handler_file), pool=pool)(GOOD, report))
    assert result.decision.accepted and len(result.review_items) == 20
    assert AuthorConfig(handler="h", task="levels").review_items == 20
