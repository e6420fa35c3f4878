"""`itemsmith judges validate-ladder RUN_DIR...`: a ladder's separation measured on the student answers
of author runs and recorded; from then on a local ladder that reaches ITEMSMITH_MIN_LADDER_AUC filters
(exit 0), one that does not stays advisory (exit 1); a run whose ladder was skipped says so. The run
report of a skipped ladder names it among the stages off and counts no student check."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.agents.authoring.models import Attempt, Brief, PlanInfo, RunReport, SlotResult
from itemsmith.agents.settings import DEFAULT_LOCAL_STUDENTS, AgentSettings
from itemsmith.agents.stages.ladder_validation import (
    MIN_TEMPLATES,
    advisory_ladder,
    ladder_name,
    load_ladder_validations,
)
from itemsmith.agents.stages.pipeline import StageInfo
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.cli.app import app
from itemsmith.items.schema import Decision, StudentResponse
from itemsmith.verification.students import StudentReport

ITEMS = 10
SKIPPED = "advisory/skipped, the local ladder does not separate (measured: ...)"


def run_folder(root: Path, name: str, accuracies: list[tuple[float, float, float]] | None) -> Path:
    """A run of one slot per template, answered by the default ladder at `accuracies` (ranks 1 to
    3), or, with None, with the ladder skipped."""
    slots = []
    for slot, accuracy in enumerate(accuracies or [None]):
        if accuracy is None:
            result = VerificationResult(decision=Decision(accepted=True, stage="students", reasons=[SKIPPED]))
        else:
            responses = [StudentResponse(student=s.name, rank=s.rank, item_index=i, raw="", choice=0,
                                         correct=i < round(a * ITEMS))
                         for s, a in zip(DEFAULT_LOCAL_STUDENTS, accuracy, strict=True) for i in range(ITEMS)]
            result = VerificationResult(decision=Decision(accepted=True, stage="students"), students=StudentReport(
                template_id=f"t{slot}", responses=responses, chance=0.25, n_items=ITEMS))
        slots.append(SlotResult(slot=slot, brief=Brief(title="Levels", category="pattern_recognition",
                                                       question="What trend?", answer_from="the series"),
                                status="accepted", attempts=[Attempt(round=1, status="ok", verification=[result])],
                                decision=result.decision))
    stages = [StageInfo(name="students", status="off", reason=SKIPPED)] if accuracies is None else []
    report = RunReport(run_id=name, handler="weather", task="t", generator="g", planner="p", max_rounds=1,
                       slots=slots, started_at=datetime.now(UTC), plan=PlanInfo(requested=1, from_planner=1,
                                                                                 fallback=0), stages=stages)
    folder = root / name
    folder.mkdir()
    (folder / "report.json").write_text(report.model_dump_json())
    return folder


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AgentSettings:
    monkeypatch.setenv("ITEMSMITH_LADDER_VALIDATIONS", str(tmp_path / "ladders.json"))
    return AgentSettings()


def test_a_ladder_in_order_is_validated_and_one_at_chance_stays_advisory(settings, tmp_path) -> None:
    ladder = list(DEFAULT_LOCAL_STUDENTS)
    few = run_folder(tmp_path, "few", [(0.2, 0.5, 0.8), (0.3, 0.4, 0.9), (0.3, 0.3, 0.6)])
    result = CliRunner().invoke(app, ["judges", "validate-ladder", str(few), "--json"])
    recorded = json.loads(result.stdout)
    assert result.exit_code == 1 and not recorded["validated"]  # in order, on fewer than MIN_TEMPLATES
    assert (recorded["auc"], recorded["pairs"], recorded["templates"]) == (pytest.approx(8.5 / 9), 9, 3)
    assert "measured on too few templates" in advisory_ladder(ladder, settings)

    rising = run_folder(tmp_path, "rising", [(0.2, 0.5, 0.8), (0.3, 0.4, 0.9)] * (MIN_TEMPLATES // 2))
    result = CliRunner().invoke(app, ["judges", "validate-ladder", str(rising), "--json"])
    assert result.exit_code == 0, result.output
    recorded = json.loads(result.stdout)
    assert recorded["validated"] and recorded["ladder"] == ladder_name(ladder)
    assert (recorded["auc"], recorded["templates"]) == (1.0, MIN_TEMPLATES)
    assert advisory_ladder(ladder, settings) is None  # the local ladder filters from now on

    guessing = run_folder(tmp_path, "guessing", [(0.3, 0.2, 0.3), (0.3, 0.3, 0.2)])
    result = CliRunner().invoke(app, ["judges", "validate-ladder", str(guessing)])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{ladder_name(ladder)}: AUC 0.33 over 6 rank pairs of 2 templates")
    assert "advisory, skipped by default" in result.stdout
    assert load_ladder_validations(settings)[ladder_name(ladder)].auc == pytest.approx(2 / 6)
    assert advisory_ladder(ladder, settings).startswith("the local ladder does not separate (measured: AUC 0.33")


def test_a_run_that_skipped_its_ladder_has_nothing_to_measure_and_its_report_says_why(settings, tmp_path) -> None:
    skipped = run_folder(tmp_path, "skipped", None)
    result = CliRunner().invoke(app, ["judges", "validate-ladder", str(skipped)])
    assert result.exit_code == 1 and "no student answered in these runs" in result.output
    summary = RunReport.model_validate_json((skipped / "report.json").read_text()).summary()
    assert summary["stages_off"] == {"students": SKIPPED}
    assert summary["verification"]["acceptance_by_stage"]["students"]["checked"] == 0
