"""`service.bank_import.import_run`: a run's accepted templates with a student pool's answers go
into the bank through the author job's own storing function, and the pool's answers calibrate
them (or, with too few students, the report says how many are needed). Scripted: the pool's
answers are written into the run report by the test, as a pool of known strength would give them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from itemsmith.agents.authoring.models import Attempt, Brief, PlanInfo, RunReport, SlotResult
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.items.schema import Decision, StudentResponse
from itemsmith.service.bank_import import import_run
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    list_student_responses,
    list_verdicts,
    open_session,
    upgrade,
)
from itemsmith.verification.students import StudentReport

TEMPLATES = ["exam_trend_direction", "exam_granger_direction", "feat_seasonality_classify"]
SAMPLES = 4


def run_with_pool(strengths: list[float]) -> RunReport:
    """A run whose three accepted templates were answered by students of the given strengths
    (student k answers item i right when a fixed draw falls below its 2PL probability)."""
    rng = np.random.default_rng(0)
    slots = []
    for slot, (template_id, difficulty) in enumerate(zip(TEMPLATES, [-1.0, 0.0, 1.0], strict=True)):
        responses = []
        for k, strength in enumerate(strengths):
            for i in range(SAMPLES):
                right = bool(rng.random() < 1 / (1 + np.exp(-2 * (strength - difficulty))))
                responses.append(StudentResponse(student=f"student-{k}", rank=k, item_index=i, raw="Answer: A",
                                                 choice=0 if right else 1, correct=right))
        decision = Decision(accepted=True, stage="students")
        result = VerificationResult(decision=decision, students=StudentReport(
            template_id=template_id, responses=responses, chance=0.25, n_items=SAMPLES))
        slots.append(SlotResult(slot=slot, brief=Brief(title=f"Brief {slot}", category="pattern_recognition", question="What trend?",
                                                       answer_from="the series"),
                                status="accepted", attempts=[Attempt(round=1, status="ok", verification=[result])],
                                decision=decision, template=get_curated(template_id)))
    return RunReport(run_id="pooled", handler="synthetic", task="trends", generator="scripted:g", planner="scripted:p",
                     max_rounds=1, num_samples=SAMPLES, seed=0, slots=slots, started_at=datetime.now(UTC),
                     plan=PlanInfo(requested=3, from_planner=3, fallback=0))


@pytest.fixture
def bank_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        create_bank(session, BankCreate(name="pooled", handler="synthetic", owner="tests"))
    return url


def test_scripted_pool_of_five_calibrates_the_imported_templates(bank_url: str) -> None:
    with open_session(bank_url) as session:
        imported = import_run(session, run_with_pool([-1.5, -0.5, 0.0, 0.5, 1.5]), "pooled", created_by="tests")
    assert [t.stored for t in imported.templates] == [True, True, True]
    calibration = imported.calibration
    assert calibration is not None and imported.calibration_skipped is None
    assert len(calibration.respondents) == 5 and calibration.calibration_id == "pooled-irt"
    ability = {r.respondent: r.ability for r in calibration.respondents}
    assert ability["student-4"] > ability["student-0"]
    assert imported.diversity is not None and imported.diversity.templates == 3
    with open_session(bank_url) as session:
        version = imported.templates[0].version_id
        assert len(list_student_responses(session, version)) == 5 * SAMPLES
        assert [v.run_id for v in list_verdicts(session, version, "irt")] == ["pooled-irt"]
        again = import_run(session, run_with_pool([-1.5, -0.5, 0.0, 0.5, 1.5]), "pooled", created_by="tests")
    # importing again stores nothing twice and does not calibrate twice
    assert [t.stored for t in again.templates] == [False, False, False]
    assert again.calibration is None and "calibrated before" in again.calibration_skipped


def test_scripted_pool_of_three_is_too_few_and_the_import_says_how_many_are_needed(bank_url: str) -> None:
    with open_session(bank_url) as session:
        imported = import_run(session, run_with_pool([-1.0, 0.0, 1.0]), "pooled", created_by="tests")
        irt = list_verdicts(session, imported.templates[0].version_id, "irt")
    assert imported.calibration is None and irt == []
    assert "3 respondent(s)" in imported.calibration_skipped and "at least 5" in imported.calibration_skipped
