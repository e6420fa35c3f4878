"""`itemsmith author` end to end with scripted models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import Result
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


def _plain(output: str) -> str:
    """Typer's error box without its frame and line breaks."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", output).split())


def _started(result: Result, tmp_path: Path) -> bool:
    """Whether the run got as far as a run id, a resume hint, the stage banner or a checkpoint."""
    return ("resume with --run-id" in result.output or "stages" in result.output.lower()
            or (tmp_path / "checkpoints.sqlite").exists())


@pytest.mark.parametrize(("flags", "message"), [
    (["--generator", "nosuch:model"], "unknown provider"),
    (["--planner", "gpt-4o"], "is not 'provider:model'"),
    (["--judge", "local:qwen-99b"], "unknown local model 'qwen-99b'"),
    (["--student", "nosuch:m@1"], "unknown provider"),
    (["--student", "local:smollm2-135m"], "write SPEC@RANK"),
], ids=["provider", "malformed", "local-model", "student-provider", "student-rank"])
def test_a_bad_model_spec_is_a_wrong_command_line_reported_before_the_run_starts(
        handler_file: Path, tmp_path: Path, flags: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "x y z",
                                      "--out", str(tmp_path), "--no-live", *flags])
    assert result.exit_code == 2 and message in _plain(result.output), result.output
    assert not _started(result, tmp_path)


@pytest.mark.parametrize(("handler", "message"), [
    ("no_such_handler", "unknown handler 'no_such_handler'"),
    ("wether", "did you mean 'weather'"),
    ("missing/handler.py", "handler file 'missing/handler.py' does not exist"),
], ids=["unknown", "typo", "missing-file"])
def test_a_bad_handler_is_a_wrong_command_line_reported_before_the_run_starts(
        tmp_path: Path, handler: str, message: str) -> None:
    script = tmp_path / "gen.json"
    script.write_text(json.dumps([fenced(GOOD)]))
    result = CliRunner().invoke(app, ["author", "--handler", handler, "--task", "x y z", "--generator",
                                      f"scripted:{script}", "--out", str(tmp_path), "--no-live"])
    assert result.exit_code == 2 and message in _plain(result.output), result.output
    assert not _started(result, tmp_path)


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
