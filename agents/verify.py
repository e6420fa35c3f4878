"""The verification stages after the structure check (judge panel, student pool, capability filter).

A later issue fills them in. The interface is fixed here: a `Verifier` takes the template source
and its structure report and returns a `Decision` (with reasons) plus optional feedback for the
generator; the graph runs the configured verifiers in order and stops at the first rejection.
For now the only stage is `pass_through`, which accepts every template that passed the
structure check.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from templates_bank.schema import Decision, StructureReport


class VerificationResult(BaseModel):
    """A stage's decision, and feedback for a refinement round when it rejects."""

    decision: Decision
    feedback: str | None = None


class Verifier(Protocol):
    async def __call__(self, source: str, report: StructureReport) -> VerificationResult: ...


async def pass_through(source: str, report: StructureReport) -> VerificationResult:
    """Accepts any template whose structure check passed (the later stages are not configured yet)."""
    if not report.passed:
        return VerificationResult(decision=Decision(accepted=False, stage="structure",
                                                    reasons=[report.error or "structure check failed"]))
    return VerificationResult(decision=Decision(
        accepted=True, stage="structure",
        reasons=[f"structure check passed ({len(report.items)} items, deterministic, varied)",
                 "content and capability verification not configured"]))
