"""The verification stages after the structure check, as the authoring graph runs them.

A `Verifier` takes the template source and its (passed) structure report and returns a
`VerificationResult`: the stage's `Decision`, feedback for the generator when it rejects (never
when it errored: calls that gave no reply are no verdict, and `run_stages` stops there), and
the stage's typed verdicts (the item audit's `AuditReport`, the judge panel's
`TemplateJudgement`, the student pool's `StudentReport`, the `CapabilityReport`), kept on the
slot's attempt so the run report and the bank keep them. `run_stages` runs the configured
verifiers in order and stops at the first rejection; a stage that draws `review_items` (the item
audit, first, draws them under a fresh seed) hands them to every later stage in place of the
structure check's items, so judges and students never see the checked seed's items. A stage's
`evidence` (the re-derivation's finding, in a line or two) is collected and handed to each later
stage that `reads_evidence` (the judge panel puts it in its prompt). With none
configured the only stage is `pass_through`, which accepts every template that passed the
structure check. The real stages are built in `agents.stages.verification_stages`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from itemsmith.agents.llm.usage import UsageTotals
from itemsmith.items.schema import AuditReport, Decision, Item, RederivationReport, StructureReport
from itemsmith.verification.capability import CapabilityReport
from itemsmith.verification.judges import TemplateJudgement
from itemsmith.verification.students import StudentReport


class Evidence(BaseModel):
    """One stage's finding as later stages read it: a line for the judges' prompt, and whether it
    independently confirms the keys (what an advisory judge panel needs to accept a template)."""

    stage: str
    text: str
    corroborates: bool = False


class VerificationResult(BaseModel):
    """A stage's decision, feedback for a refinement round when it rejects, and its verdicts."""

    decision: Decision
    feedback: str | None = None
    audit: AuditReport | None = None
    review_items: list[Item] = Field(default_factory=list, description="items for the later stages (fresh seed)")
    review_seed: int | None = None
    rederivation: RederivationReport | None = None
    evidence: list[Evidence] = Field(default_factory=list, description="what the stage found, for the later "
                                                                       "stages that read evidence (the judges)")
    judgement: TemplateJudgement | None = None
    students: StudentReport | None = None
    capability: CapabilityReport | None = None
    errors: list[str] = Field(default_factory=list, description="model calls that failed during the stage")
    errored: bool = Field(False, description="the stage could not decide: its calls failed (missing data, not a "
                                             "rejection); the slot stops as errored and a rerun retries the stage")
    usage: UsageTotals = Field(default_factory=UsageTotals)
    elapsed_s: float = 0.0


class Verifier(Protocol):
    async def __call__(self, source: str, report: StructureReport) -> VerificationResult: ...


class EvidenceReader(Protocol):
    """A verifier that also reads the `evidence` of the stages before it (the judge panel)."""

    reads_evidence: bool

    async def __call__(self, source: str, report: StructureReport, *,
                       evidence: Sequence[Evidence] = ()) -> VerificationResult: ...


async def pass_through(source: str, report: StructureReport) -> VerificationResult:
    """Accepts any template whose structure check passed (no content stage configured)."""
    if not report.passed:
        return VerificationResult(decision=Decision(accepted=False, stage="structure",
                                                    reasons=[report.error or "structure check failed"]))
    return VerificationResult(decision=Decision(
        accepted=True, stage="structure",
        reasons=[f"structure check passed ({len(report.items)} items, deterministic, varied)",
                 "content and capability verification not configured"]))


async def run_stages(verifiers: Sequence[Verifier], source: str, report: StructureReport, *,
                     on_stage: Callable[[str], None] | None = None
                     ) -> tuple[Decision, str | None, list[VerificationResult]]:
    """Run `verifiers` (default: `pass_through`) in order, stopping at the first rejection.

    Returns the overall decision (the rejecting stage's, or an acceptance carrying every stage's
    reasons), the rejecting stage's feedback, and every stage's result in order. `on_stage` is
    told each stage's `label` (``verifying`` for a verifier without one) as it starts.
    """
    results: list[VerificationResult] = []
    evidence: list[Evidence] = []
    for verifier in verifiers or (pass_through,):
        if on_stage is not None:
            on_stage(getattr(verifier, "label", "verifying"))
        if getattr(verifier, "reads_evidence", False):
            result = await verifier(source, report, evidence=tuple(evidence))  # type: ignore[call-arg]
        else:
            result = await verifier(source, report)
        evidence += result.evidence
        results.append(result)
        if result.errored:
            return result.decision, None, results
        if not result.decision.accepted:
            return result.decision, result.feedback, results
        if result.review_items:
            report = report.model_copy(update={"items": result.review_items})
    reasons = [f"{r.decision.stage}: {reason}" for r in results for reason in r.decision.reasons]
    return Decision(accepted=True, stage=results[-1].decision.stage, reasons=reasons), None, results
