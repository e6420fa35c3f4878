"""Records at the agents' boundaries: briefs, attempts, slot results, the run report."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from itemsmith.agents.authoring.taxonomy import CATEGORIES, CONCEPTS, TASK_KINDS
from itemsmith.agents.authoring.template_kind import TemplateKind
from itemsmith.agents.llm.usage import UsageTotals
from itemsmith.agents.stages.pipeline import StageInfo
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.items.schema import Decision, Template
from itemsmith.templates_bank.diversity import TemplateDiversity
from itemsmith.verification.judges import TemplateJudgement, krippendorff_alpha_interval, panel_agreement

SlotStatus = Literal["pending", "running", "accepted", "discarded", "errored", "failed"]
MAX_BRIEF_CONTEXT = 300


class Brief(BaseModel):
    """What one template should ask: planned once, then written (and refined) by the generator."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=3, max_length=160)
    category: str
    concept: str = ""
    kind: Literal["mc", "tf"] = "mc"
    question: str = Field(min_length=5, max_length=600)
    answer_from: str = Field(min_length=3, max_length=600)
    context: str = Field("", max_length=MAX_BRIEF_CONTEXT,
                         description="what the question text tells its reader about the data, in the handler's "
                                     "words: what a record is, the unit (the planner fills it in)")
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

    @field_validator("context", mode="before")
    @classmethod
    def _context(cls, value: object) -> object:
        """A planner's long context is cut at a word, not refused: the brief is still usable."""
        text = " ".join(str(value or "").split())
        return text if len(text) <= MAX_BRIEF_CONTEXT else text[:MAX_BRIEF_CONTEXT - 3].rsplit(" ", 1)[0] + "..."

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
    status: str  # extraction_error | runaway | repeated | lint | copied | ok | refused | error | killed | rejected | verify_rejected | verify_errored | provider_error
    error: str | None = None
    feedback: str | None = None
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    llm_s: float = 0.0
    check_s: float = 0.0
    retries: int = 0
    repeated: bool = False  # the model resent code that already failed (not run again; the next round samples hotter)
    restarted: bool = False  # a fresh start without the curated example after code that did not run
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
    kind: TemplateKind | None = Field(None, description="what the accepted template's blocks compute (None: not "
                                                        "accepted, or an older report)")

    @property
    def filled(self) -> bool | None:
        """The accepted template asks what its slot's category asks: its blocks compute that category
        (free code, calling no block, is taken at its brief's word); None when not accepted."""
        if self.kind is None:
            return None
        return self.kind.category is None or self.kind.category == self.brief.category


def describe_template(slot: SlotResult) -> dict[str, object]:
    """An accepted template as the summary lists it: its category and concept (what its blocks
    compute, else its brief's), whether that is what its slot asked, and whether it is the
    prompt's skeleton unchanged."""
    kind = slot.kind or TemplateKind()
    return {"slot": slot.slot, "title": slot.brief.title, "category": kind.category or slot.brief.category,
            "concept": kind.concept or slot.brief.concept or None, "asked": slot.brief.category,
            "filled": slot.filled, "blocks": kind.blocks, "skeleton_unchanged": kind.skeleton_unchanged}


class PlanInfo(BaseModel):
    requested: int
    from_planner: int
    fallback: int
    usage: UsageTotals = Field(default_factory=UsageTotals)
    errors: list[str] = Field(default_factory=list)


class RunReport(BaseModel):
    """A whole authoring run: per-slot results and the run's totals."""

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
    started_at: datetime = Field(description="when the run first started (kept across resumes)")
    finished_at: datetime | None = Field(None, description="when this report was made (None: an older report)")
    wall_s: float = Field(0.0, description="working time: the sessions' time on the run, not the time between them")
    resumed: bool = False
    usage: UsageTotals = Field(default_factory=UsageTotals)
    stages: list[StageInfo] = Field(default_factory=list, description="the stages run (empty: an older report)")
    diversity: TemplateDiversity | None = Field(None, description="of the accepted templates' items that their "
                                                                  "content stages saw (None: none accepted, or an "
                                                                  "older report)")

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
        review = self.verification_summary()
        return {
            "run_id": self.run_id, "handler": self.handler, "generator": self.generator,
            "slots": len(self.slots), "accepted": len(accepted),
            "discarded": sum(s.status == "discarded" for s in self.slots),
            "failed": sum(s.status == "failed" for s in self.slots),
            "errored": sum(s.status == "errored" for s in self.slots),
            **{f"structure_pass_rate_r{k}": round(self.structure_pass_rate(k), 3)
               for k in range(1, self.max_rounds + 1)},
            "wall_s": round(self.wall_s, 1), **total.counts(),
            "tokens_per_accepted": round(total.total_tokens / len(accepted)) if accepted else None,
            "input_tokens_per_accepted": round(total.input_tokens / len(accepted)) if accepted else None,
            "output_tokens_per_accepted": round(total.output_tokens / len(accepted)) if accepted else None,
            "verification_tokens_per_accepted": (round((cast(int, review["input_tokens"])
                                                        + cast(int, review["output_tokens"])) / len(accepted))
                                                 if accepted else None),
            "runaway_rounds": sum(a.status == "runaway" for s in self.slots for a in s.attempts),
            "repeated_rounds": sum(a.status == "repeated" for s in self.slots for a in s.attempts),
            "restarted_rounds": sum(a.restarted for s in self.slots for a in s.attempts),
            "wall_s_per_accepted": round(self.wall_s / len(accepted), 1) if accepted else None,
            "verification": review,
            "stages_off": {stage.name: stage.reason for stage in self.stages if stage.status == "off"},
            "diversity": self.diversity.model_dump(mode="json") if self.diversity is not None else None,
            "templates": [describe_template(slot) for slot in accepted],
            "not_filled": [{"slot": s.slot, "asked": s.brief.category,
                            "got": s.kind.category if s.kind is not None and s.status == "accepted" else None,
                            "status": s.status} for s in self.slots if s.filled is not True],
            "skeleton_unchanged": sum(bool(s.kind and s.kind.skeleton_unchanged) for s in accepted),
        }

    def verification_summary(self) -> dict[str, object]:
        """Over every candidate that reached the sandbox: how many each stage checked and passed,
        what the item audit rejected candidates for (shortcut or check), the judges' agreement
        (`judge_agreement`) and mean score per criterion, the students' accuracy per capability rank
        (with and without the series), the capability outcomes and what the verification calls cost."""
        attempts = [(slot.slot, a) for slot in self.slots for a in slot.attempts]
        checked = [a for _, a in attempts if a.status in SANDBOX_STATUSES]
        stages = {"structure": _rate(len(checked), sum(a.status in ("ok", "verify_rejected") for a in checked))}
        results = [(slot, a.round, r) for slot, a in attempts for r in a.verification]
        for stage in ("audit", "rederivation", "judges", "students"):  # a skipped advisory ladder answered nothing
            ran = [r for *_, r in results if r.decision.stage == stage and (stage != "students" or r.students is not None)]
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
            **judge_agreement(judgements),
            "judge_criterion_mean": {c: _round(sum(v) / len(v)) if v else None for c, v in scores.items()},
            "judge_missing_scores": sum(s.score is None for j in judgements for s in j.scores),
            "student_accuracy_by_rank": {
                str(rank): {"students": sorted(students), "n": len(correct.get((rank, False), [])),
                            "accuracy": _mean(correct.get((rank, False), [])),
                            "blind_accuracy": _mean(correct.get((rank, True), []))}
                for rank, students in sorted(names.items())},
            "capability_outcomes": outcomes,
            "stage_errors": sum(len(r.errors) for *_, r in results),
            "stages_errored": sum(r.errored for *_, r in results),
            **usage.counts(),
        }


def judge_agreement(judgements: Sequence[TemplateJudgement]) -> dict[str, object]:
    """Krippendorff's alpha (interval) of the judge scores over the candidates, and what it measures.

    With two or more judges: agreement between the judges, over every (candidate, criterion). With
    one judge there is no second rater, so the alpha is taken with the criteria as the raters, over
    the candidates: how consistently its criteria rank the candidates (internal consistency; a judge
    that scores every criterion alike, halo included, reaches 1); it needs two judged candidates.
    None when it cannot be computed: too few scores, or all equal."""
    judges = {s.judge for j in judgements for s in j.scores}
    if len(judges) >= 2:
        alpha, basis = panel_agreement(judgements), "judges: agreement between the judges over candidate x criterion"
    elif judges:
        criteria = list(dict.fromkeys(s.criterion for j in judgements for s in j.scores))
        matrix = np.full((len(criteria), len(judgements)), np.nan)
        for column, judgement in enumerate(judgements):
            for score in judgement.scores:
                if score.score is not None:
                    matrix[criteria.index(score.criterion), column] = score.score
        alpha = krippendorff_alpha_interval(matrix) if len(judgements) >= 2 else None
        basis = ("criteria: one judge, so its criteria are the raters over the candidates (internal consistency "
                 "of its scores, not agreement between judges)")
    else:
        return {"judge_agreement_alpha": None, "judge_agreement_basis": "no candidate reached the judges"}
    if alpha is None:
        basis += "; undefined here (fewer than 2 judged candidates, too few scores, or no variation)"
    return {"judge_agreement_alpha": _round(alpha), "judge_agreement_basis": basis}


SANDBOX_STATUSES = frozenset({"ok", "refused", "error", "killed", "rejected", "verify_rejected"})


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _mean(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def _rate(checked: int, passed: int) -> dict[str, object]:
    return {"checked": checked, "passed": passed, "rate": round(passed / checked, 3) if checked else None}
