"""`itemsmith author` end to end with scripted models."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from itemsmith.cli.app import app

from .conftest import GOOD, fenced, plan_reply


def test_scripted_author_command_writes_templates_and_report(handler_file: Path, tmp_path: Path) -> None:
    gen = tmp_path / "gen.yaml"
    gen.write_text(json.dumps({"replies": [fenced(GOOD)]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level", "Peak level"])]))
    args = ["author", "--handler", str(handler_file), "--task", "water levels", "--templates", "2", "--generator",
            f"scripted:{gen}", "--planner", f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "cli",
            "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):result.output.rindex("}") + 1])
    assert summary["accepted"] == 2 and summary["structure_pass_rate_r1"] == 1.0
    run_dir = tmp_path / "out" / "cli"
    assert len(list((run_dir / "templates").glob("*.py"))) == 2
    assert (run_dir / "report.json").is_file() and (run_dir / "plan.json").is_file()
    assert (tmp_path / "out" / "checkpoints.sqlite").is_file()
    lines = result.output.splitlines()  # --no-live: the phases as lines
    for phase in ("profiling the handler", "planning", "authoring", "slot 0 round 1: generating", "writing the report"):
        assert any(line.startswith("[") and line.endswith(f"] {phase}") for line in lines), (phase, result.output)

    # Named again, the finished run only reports: same summary, same exit code, report.json untouched.
    written = (run_dir / "report.json").read_bytes()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "run cli had finished" in again.output
    assert json.loads(again.output[again.output.index("{"):again.output.rindex("}") + 1]) == summary
    assert (run_dir / "report.json").read_bytes() == written


def test_author_command_reports_bad_specs(handler_file: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "x y z", "--generator",
                                      "nosuch:model", "--out", str(tmp_path), "--no-live"])
    assert result.exit_code == 1 and "unknown provider" in result.output


def test_author_command_reports_unknown_handlers(tmp_path: Path) -> None:
    script = tmp_path / "gen.json"
    script.write_text(json.dumps([fenced(GOOD)]))
    result = CliRunner().invoke(app, ["author", "--handler", "no_such_handler", "--task", "x y z", "--generator",
                                      f"scripted:{script}", "--out", str(tmp_path), "--no-live"])
    assert result.exit_code == 1 and "unknown handler" in result.output


def test_author_command_fails_fast_without_a_key(handler_file: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "x y z", "--generator",
                                      "openai:gpt-4o", "--out", str(tmp_path), "--no-live"])
    assert result.exit_code == 1 and "OPENAI_API_KEY" in result.output
    assert not (tmp_path / "checkpoints.sqlite").exists()  # nothing started


def test_scripted_author_exits_1_when_fewer_templates_than_asked_are_accepted(handler_file: Path,
                                                                                tmp_path: Path) -> None:
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps({"rules": [{"match": "Peak level", "replies": ["I cannot write this one."]}],
                               "replies": [fenced(GOOD)]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level", "Peak level"])]))
    args = ["author", "--handler", str(handler_file), "--task", "water levels", "--templates", "2", "--rounds", "1",
            "--generator", f"scripted:{gen}", "--planner", f"scripted:{plan}", "--out", str(tmp_path / "out"),
            "--no-live", "--json"]
    partial = CliRunner().invoke(app, [*args, "--run-id", "partial"])
    assert partial.exit_code == 1, partial.output
    assert "1 of 2 templates accepted" in partial.output and "--allow-partial" in partial.output
    allowed = CliRunner().invoke(app, [*args, "--run-id", "allowed", "--allow-partial"])
    assert allowed.exit_code == 0, allowed.output
