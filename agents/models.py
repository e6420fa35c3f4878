"""Records at the agents' boundaries: briefs, attempts, slot results, the run report."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from itemsmith.agents.taxonomy import CATEGORIES, CONCEPTS, TASK_KINDS
from itemsmith.agents.usage import UsageTotals
from itemsmith.agents.verify import VerificationResult
from itemsmith.templates_bank.items.schema import Decision, Template
from itemsmith.verification.judges import panel_agreement

SlotStatus = Literal["pending", "running", "accepted", "discarded", "failed"]


class Brief(BaseModel):
    """What one template should ask: planned once, then written (and refined) by the generator."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=3, max_length=160)
    category: str
    concept: str = ""
    kind: Literal["mc", "tf"] = "mc"
    question: str = Field(min_length=5, max_length=600)
    answer_from: str = Field(min_length=3, max_length=600)
    columns: list[str] = Field(default_factory=list)
    origin: Literal["planner", "fallback", "given"] = "planner"

    @field_validator("category")
    @classmethod
    def _category(cls, value: str) -> str:
        value = value.strip().lower().replace(" ", "_")
        if value not in CATEGORIES:
            raise ValueError(f"category {value!r} is not one of {', '.join(CATEGORIES)}")
        return value

    @field_validator("concept")
    @classmethod
    def _concept(cls, value: str) -> str:
        value = value.strip().lower().replace(" ", "_")
        return value if value in CONCEPTS or value in TASK_KINDS else ""

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: object) -> object:
        text = str(value).strip().lower()
        return "tf" if text in ("tf", "true/false", "true_false", "boolean") else "mc"

    @field_validator("columns", mode="before")
    @classmethod
    def _columns(cls, value: object) -> object:
        if isinstance(value, str):
            return [c.strip() for c in value.split(",") if c.strip()]
        return value


class Attempt(BaseModel):
    """One round of one slot: the code written, how the checks went, what it cost."""

    round: int
    source: str | None = None
    status: str  # extraction_error | lint | ok | refused | error | killed | rejected | verify_rejected | provider_error
    error: str | None = None
    feedback: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    llm_s: float = 0.0
    check_s: float = 0.0
    retries: int = 0
    repeated: bool = False  # the model first resent failed code and was asked again (one extra call)
    verification: list[VerificationResult] = Field(default_factory=list)  # the stages run, in order


class SlotResult(BaseModel):
    """How one template slot ended."""

    slot: int
    brief: Brief
    status: SlotStatus
    rounds: int = 0
    structure_passed_round: int | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    decision: Decision | None = None
    template: Template | None = None
    usage: UsageTotals = Field(default_factory=UsageTotals)
    wall_s: float = 0.0
    error: str | None = None


class PlanInfo(BaseModel):
    requested: int
    from_planner: int
    fallback: int
    usage: UsageTotals = Field(default_factory=UsageTotals)
    errors: list[str] = Field(default_factory=list)


class RunReport(BaseModel):
    """A whole authoring run: per-slot results and the numbers the issue asks for."""

    run_id: str
    handler: str
    task: str
    generator: str
    planner: str
    max_rounds: int
    num_samples: int | None = Field(None, description="items per structure-check run (None: an older report)")
    seed: int | None = Field(None, description="seed of the structure checks (None: an older report)")
    slots: list[SlotResult]
    plan: PlanInfo
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    wall_s: float = 0.0
    resumed: bool = False
    usage: UsageTotals = Field(default_factory=UsageTotals)

    @property
    def accepted(self) -> list[SlotResult]:
        return [s for s in self.slots if s.status == "accepted"]

    def structure_pass_rate(self, within_rounds: int) -> float:
        """Share of slots whose template passed the structure check within `within_rounds` rounds."""
        if not self.slots:
            return 0.0
        passed = [s for s in self.slots if s.structure_passed_round is not None
                  and s.structure_passed_round <= within_rounds]
        return len(passed) / len(self.slots)

    def summary(self) -> dict[str, object]:
        accepted = self.accepted
        total = self.usage
        return {
            "run_id": self.run_id, "handler": self.handler, "generator": self.generator,
            "slots": len(self.slots), "accepted": len(accepted),
            "discarded": sum(s.status == "discarded" for s in self.slots),
            "failed": sum(s.status == "failed" for s in self.slots),
            **{f"structure_pass_rate_r{k}": round(self.structure_pass_rate(k), 3)
               for k in range(1, self.max_rounds + 1)},
            "wall_s": round(self.wall_s, 1), "calls": total.calls, "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens, "cost_usd": total.cost_usd,
            "tokens_per_accepted": round(total.total_tokens / len(accepted)) if accepted else None,
            "wall_s_per_accepted": round(self.wall_s / len(accepted), 1) if accepted else None,
            "verification": self.verification_summary(),
        }

    def verification_summary(self) -> dict[str, object]:
        """Over every candidate that reached the sandbox: how many each stage checked and passed,
        what the item audit rejected candidates for (shortcut or check), the judges' agreement (Krippendorff's alpha over candidate x criterion) and mean score per
        criterion, the students' accuracy per capability rank (with and without the series), the
        capability outcomes and what the verification calls cost."""
        attempts = [(slot.slot, a) for slot in self.slots for a in slot.attempts]
        checked = [a for _, a in attempts if a.status in SANDBOX_STATUSES]
        stages = {"structure": _rate(len(checked), sum(a.status in ("ok", "verify_rejected") for a in checked))}
        results = [(slot, a.round, r) for slot, a in attempts for r in a.verification]
        for stage in ("audit", "judges", "students"):
            ran = [r for *_, r in results if r.decision.stage == stage]
            stages[stage] = _rate(len(ran), sum(r.decision.accepted for r in ran))
        audit_problems: dict[str, int] = {}  # shortcut or failed check -> candidates the audit rejected for it
        for *_, r in results:
            if r.audit is not None and not r.audit.passed:
                for problem in r.audit.shortcuts + r.audit.failed_checks + (["error"] if r.audit.error else []):
                    audit_problems[problem] = audit_problems.get(problem, 0) + 1
        judgements = [r.judgement.model_copy(update={"template_id": f"{slot}:{round_}"})
                      for slot, round_, r in results if r.judgement is not None]
        scores: dict[str, list[float]] = {}
        for judgement in judgements:
            for score in judgement.scores:
                scores.setdefault(score.criterion, [])
                if score.score is not None:
                    scores[score.criterion].append(score.score)
        names: dict[int, set[str]] = {}
        correct: dict[tuple[int, bool], list[bool]] = {}  # (rank, blind) -> correct flags
        outcomes: dict[str, int] = {}
        usage = UsageTotals()
        for *_, r in results:
            usage = usage.add(r.usage)
            if r.capability is not None:
                outcomes[r.capability.outcome.value] = outcomes.get(r.capability.outcome.value, 0) + 1
            for response in r.students.responses if r.students is not None else []:
                names.setdefault(response.rank, set()).add(response.student)
                correct.setdefault((response.rank, response.blind), []).append(response.correct)
        return {
            "acceptance_by_stage": stages,
            "audit_rejections": audit_problems,
            "judge_agreement_alpha": _round(panel_agreement(judgements)) if judgements else None,
            "judge_criterion_mean": {c: _round(sum(v) / len(v)) if v else None for c, v in scores.items()},
            "judge_missing_scores": sum(s.score is None for j in judgements for s in j.scores),
            "student_accuracy_by_rank": {
                str(rank): {"students": sorted(students), "n": len(correct.get((rank, False), [])),
                            "accuracy": _mean(correct.get((rank, False), [])),
                            "blind_accuracy": _mean(correct.get((rank, True), []))}
                for rank, students in sorted(names.items())},
            "capability_outcomes": outcomes,
            "stage_errors": sum(len(r.errors) for *_, r in results),
            "calls": usage.calls, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cost_usd": usage.cost_usd,
        }


SANDBOX_STATUSES = frozenset({"ok", "refused", "error", "killed", "rejected", "verify_rejected"})


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _mean(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def _rate(checked: int, passed: int) -> dict[str, object]:
    return {"checked": checked, "passed": passed, "rate": round(passed / checked, 3) if checked else None}
