"""Which student ladders may filter: a ladder of local models counts only once it is validated.

The capability filter reads the order of the students' accuracies against their declared ranks.
A ladder whose students do not order on the templates it is shown (all at chance on reasoning
items, as the default local one is) reads `all_poor`, `flat` or `inconclusive` on every template
and keeps whatever it is shown, and its answers are most of an offline run's time. Its separation
is `verification.capability.ladder_auc`: the probability that, on one template, a student of a
higher rank is more accurate (with the series) than one of a lower rank, ties half (0.5: the ranks
say nothing). It is the judges' AUC (`judge_validation`) read over rank pairs instead of good and
flawed templates, and it needs the same `AgentSettings.min_ladder_auc` (0.7), measured on at
least `MIN_TEMPLATES` (10) templates: simulated, a ladder that guesses (three students at chance,
20 items a template, `benchmarks/capability_null.py`) reaches 0.7 on 10.5 % of measurements over 4
templates and 2.25 % over 10; one rising 0.25/0.45/0.65 on 99.8 % and 100 %. It measures order
only: a ladder that orders on easy templates and not on hard ones is measured on the templates it
was shown.

A ladder of local models only (llama.cpp) whose recorded separation does not reach it is advisory
(`advisory_ladder`): by default (`ITEMSMITH_ADVISORY_STUDENTS=skip`) no student answers, and the
run header, the run report and every accepted template's decision say so; ``run`` (`itemsmith
author --run-advisory-students`) runs it and lets it filter as before. A ladder with a hosted or
endpoint student filters as it always did.

Measured (`MEASURED`, used when the validations file has no record of that ladder): the default
ladder (SmolLM2-135M@1, Qwen2.5-Coder-0.5B@2, -1.5B@3) on the four candidates its 2026-12-07
offline weather run showed it, 20 items each (`benchmarks/author_ladder.py`), orders at 0.62, every
accuracy 0.20 to 0.45 against chance 0.25. `itemsmith judges validate-ladder RUN_DIR...` measures
a ladder on the student answers of runs where it answered and records it in the validations file
(`ITEMSMITH_LADDER_VALIDATIONS`, default `ladder_validations.json` in the data folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from itemsmith.agents.llm.spec import StudentSpec
from itemsmith.agents.settings import DEFAULT_LOCAL_STUDENTS, AgentSettings
from itemsmith.agents.stages.validation_file import load_records, store_record
from itemsmith.templates_bank.settings import BankSettings

if TYPE_CHECKING:
    from itemsmith.verification.students import StudentReport

__all__ = ["MEASURED", "MIN_TEMPLATES", "LadderValidation", "advisory_ladder", "ladder_name", "ladder_validations_path",
           "load_ladder_validations", "measure_ladder", "record_ladder_validation"]

REMEASURE = "itemsmith judges validate-ladder"
MIN_TEMPLATES = 10  # fewer, and a guessing ladder passes too often (see above)


class LadderValidation(BaseModel):
    """One ladder's measured separation: how often a stronger student beat a weaker one."""

    ladder: str = Field(description="its students as SPEC@RANK by rank (`ladder_name`)")
    auc: float | None = Field(description="P(higher rank more accurate on a template), ties half; None: no pair")
    pairs: int = Field(description="(template, higher rank, lower rank) pairs it averages")
    templates: int
    source: str = Field(description="what it was measured on")
    measured_at: datetime

    def decisive(self, min_auc: float) -> bool:
        return self.auc is not None and self.auc >= min_auc and self.templates >= MIN_TEMPLATES

    def describe(self) -> str:
        auc = "no pair of ranks" if self.auc is None else f"AUC {self.auc:.2f}"
        return (f"{auc} over {self.pairs} rank pairs of {self.templates} templates, {self.source}, "
                f"{self.measured_at:%Y-%m-%d}")


def ladder_name(students: Sequence[StudentSpec]) -> str:
    """The ladder's students as SPEC@RANK, by rank then spec: what its validation is recorded under."""
    return ", ".join(str(s) for s in sorted(students, key=lambda s: (s.rank, s.name)))


MEASURED = LadderValidation(
    ladder=ladder_name(DEFAULT_LOCAL_STUDENTS), auc=0.625, pairs=12, templates=4,
    source="the default offline weather run's candidates, 20 items each (benchmarks/author_ladder.py)",
    measured_at=datetime(2026, 12, 7, tzinfo=UTC))


def ladder_validations_path(settings: AgentSettings) -> Path:
    return settings.ladder_validations or BankSettings().data_dir / "ladder_validations.json"


def load_ladder_validations(settings: AgentSettings) -> dict[str, LadderValidation]:
    """The recorded validations by ladder: the validations file's, over the built-in `MEASURED`."""
    recorded = load_records(ladder_validations_path(settings), LadderValidation, "ladder", kind="ladder",
                            remeasure=REMEASURE)
    return {MEASURED.ladder: MEASURED, **recorded}


def record_ladder_validation(validation: LadderValidation, settings: AgentSettings) -> Path:
    """Store `validation` (replacing the ladder's earlier one); returns the file."""
    return store_record(ladder_validations_path(settings), validation, "ladder", kind="ladder", remeasure=REMEASURE)


def measure_ladder(reports: Sequence[StudentReport], *, source: str) -> LadderValidation:
    """The separation of the ladder that answered `reports` (one a template; the students named
    by their answers). Imports the statistics when it runs: the rest is read on every command's start."""
    from itemsmith.verification.capability import ladder_auc

    students = {StudentSpec.model_validate(f"{r.student}@{r.rank}") for report in reports for r in report.responses}
    auc, pairs = ladder_auc(reports)
    return LadderValidation(ladder=ladder_name(list(students)), auc=auc, pairs=pairs, templates=len(reports),
                            source=source, measured_at=datetime.now(UTC))


def advisory_ladder(students: Sequence[StudentSpec], settings: AgentSettings) -> str | None:
    """Why `students` is advisory (local models only, separation not measured to reach
    `settings.min_ladder_auc`), or None when it filters."""
    if not students or any(s.spec.provider != "local" for s in students):
        return None
    found = load_ladder_validations(settings).get(ladder_name(students))
    if found is None:
        return (f"the local ladder's separation is not measured (AUC >= {settings.min_ladder_auc:g} needed: "
                f"{REMEASURE})")
    if found.decisive(settings.min_ladder_auc):
        return None
    if found.auc is not None and found.auc >= settings.min_ladder_auc:
        return (f"the local ladder's separation is measured on too few templates (measured: {found.describe()}; "
                f"{MIN_TEMPLATES} templates needed)")
    return f"the local ladder does not separate (measured: {found.describe()}; {settings.min_ladder_auc:g} needed)"
