"""Records at the agents' boundaries: briefs, attempts, slot results, the run report."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from templates_bank.schema import Decision, Template

from agents.taxonomy import CATEGORIES, CONCEPTS, TASK_KINDS
from agents.usage import UsageTotals

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
    slots: list[SlotResult]
    plan: PlanInfo
    started_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
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
        }
