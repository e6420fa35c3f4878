"""`itemsmith author` end to end with scripted models: the default judge panel of the settings
runs, the header goes to stderr (stdout stays one JSON object with --json), and report.json
records the stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app

from .conftest import GOOD, fenced, plan_reply


def test_scripted_default_judge_runs_and_report_records_the_stages(monkeypatch: pytest.MonkeyPatch,
                                                                   handler_file: Path, tmp_path: Path,
                                                                   validate_judge) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"replies": ["Clear and answerable from the series.\nScore: 9"]}))
    validate_judge(f"scripted:{judge}")  # measured: its scores decide
    monkeypatch.setenv("ITEMSMITH_DEFAULT_JUDGES", json.dumps([f"scripted:{judge}"]))
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps({"replies": [fenced(GOOD)]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level"])]))
    result = CliRunner().invoke(app, [
        "author", "--handler", str(handler_file), "--task", "water levels", "--templates", "1", "--generator",
        f"scripted:{gen}", "--planner", f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "staged",
        "--no-students", "--no-live", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # stdout: the summary only
    assert summary["accepted"] == 1
    assert summary["verification"]["acceptance_by_stage"]["judges"] == {"checked": 1, "passed": 1, "rate": 1.0}
    assert summary["verification"]["judge_agreement_basis"].startswith("criteria: one judge")
    assert f"  judge panel       on: scripted:{judge}; default panel; chat judges reason, then score" \
        in result.stderr.splitlines()
    report = json.loads((tmp_path / "out" / "staged" / "report.json").read_text())
    stages = {s["name"]: s for s in report["stages"]}
    assert list(stages) == ["structure", "audit", "rederivation", "judges", "students", "capability"]
    assert stages["judges"]["status"] == "on" and stages["judges"]["models"] == [f"scripted:{judge}"]
    assert stages["students"] == {"name": "students", "status": "off", "models": [], "left_out": [],
                                  "reason": "turned off (--no-students, or students: [])"}
