"""The run header of `itemsmith author`: which stages run and with which models, printed on
stderr before any work, and the flags that turn stages off. The runs here stop right after the
header (the run itself is replaced by one that prints it and stops), so no model is loaded and
nothing is authored; a missing key, or a handler that does not load, stops a run before it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.agents.authoring import run as run_module
from itemsmith.agents.errors import AgentError
from itemsmith.agents.llm.providers import local as local_models
from itemsmith.cli.app import app

BROKEN_HANDLER = """  # loads, but its data cannot be read
import pandas as pd

class Broken:
    name = "broken"
    description = "a handler whose data cannot be read"

    def records(self):
        raise RuntimeError("the data folder is empty")

    def series(self, record_id):
        return pd.DataFrame()
"""


@pytest.fixture(autouse=True)
def builtin_defaults_a_dummy_key_and_a_run_that_stops_after_its_header(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ITEMSMITH_DEFAULT_JUDGES", "ITEMSMITH_DEFAULT_STUDENTS", "ITEMSMITH_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")

    async def header_then_stop(config, *, on_checked, **kwargs):
        on_checked()
        raise AgentError("stopped after the header")

    monkeypatch.setattr(run_module, "author", header_then_stop)


def installed_only(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    monkeypatch.setattr(local_models, "installed", lambda name: name in names)
    monkeypatch.setattr(local_models, "llama_available", lambda: True)


def invoke(tmp_path: Path, *extra: str, handler: str = "synthetic") -> tuple[int, str, str]:
    """Exit code, stdout and stderr of a run that stops right after its header."""
    result = CliRunner().invoke(app, ["author", "--handler", handler, "--task", "levels of the series",
                                      "--generator", "openai:gpt-4o", "--out", str(tmp_path), "--no-live", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_header_shows_the_default_local_pipeline_before_any_work(monkeypatch, tmp_path) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    code, stdout, stderr = invoke(tmp_path, "--json")
    assert code == 1 and "stopped after the header" in stderr and stdout == ""  # the header is on stderr, even with --json
    lines = stderr.splitlines()
    assert "generator: openai:gpt-4o" in lines
    assert any(line.startswith("  structure         on: in the sandbox, 2 worker(s)") for line in lines)
    _, _, restarting = invoke(tmp_path, "--restart-broken")  # the flag reaches the run (default: local only)
    assert ("generator: openai:gpt-4o; code that does not run is not refined: the next round restarts without the "
            "curated example"
            in restarting.splitlines())
    assert "  item audit        on: blind solvers and item checks, no model" in lines
    assert any(line.startswith("  judge panel       on: local:qwen2.5-coder-1.5b; default panel") for line in lines)
    assert any(line.startswith("  student pool      off: advisory/skipped, the local ladder does not separate "
                               "(measured: AUC 0.62") for line in lines)
    assert "  capability filter off: the student ladder is advisory (skipped)" in lines
    _, _, forced = invoke(tmp_path, "--run-advisory-students")  # the flag runs the ladder as before
    assert any(line.startswith("  student pool      on: local:smollm2-135m@1, local:qwen2.5-coder-0.5b@2, "
                               "local:qwen2.5-coder-1.5b@3; default ladder") for line in forced.splitlines())
    assert any(line.startswith("  capability filter on: accuracy against rank 1 < 2 < 3") for line in forced.splitlines())


def test_header_names_missing_models_and_the_filter_it_turns_off(monkeypatch, tmp_path) -> None:
    installed_only(monkeypatch, "smollm2-135m")
    code, _, stderr = invoke(tmp_path, "--run-advisory-students")
    lines = stderr.splitlines()
    assert code == 1
    assert "  judge panel       off: no default judge is installed" in lines
    assert "                    left out: local:qwen2.5-coder-0.5b@2: not installed: pip install " \
           "'itemsmith[local-small]'" in lines
    assert any(line.startswith("  capability filter off: needs students of at least 2 different ranks, the pool "
                               "has rank 1 only") for line in lines)


def test_no_judges_and_no_students_turn_the_stages_off(monkeypatch, tmp_path) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    code, _, stderr = invoke(tmp_path, "--no-judges", "--no-students")
    lines = stderr.splitlines()
    assert code == 1
    assert "  judge panel       off: turned off (--no-judges, or judges: [])" in lines
    assert "  student pool      off: turned off (--no-students, or students: [])" in lines
    assert "  capability filter off: no student pool" in lines


def test_a_stage_named_and_turned_off_at_once_is_a_usage_error(tmp_path) -> None:
    code, _, stderr = invoke(tmp_path, "--judge", "openai:gpt-4o", "--no-judges")
    assert code == 2 and "--judge and --no-judges exclude each other" in stderr
    code, _, stderr = invoke(tmp_path, "--student", "openai:gpt-4o@1", "--no-students")
    assert code == 2 and "--student and --no-students exclude each other" in stderr


def test_a_malformed_default_ladder_fails_before_any_work(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ITEMSMITH_DEFAULT_STUDENTS", '["local:smollm2-135m"]')
    code, _, stderr = invoke(tmp_path)
    assert code == 1 and "ITEMSMITH_DEFAULT_STUDENTS" in stderr and "stages:" not in stderr


def test_a_missing_key_of_any_role_is_reported_before_the_header_and_before_any_work(monkeypatch, tmp_path) -> None:
    """Every role's model is checked before anything runs: all that lack a key are named at once."""
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _, stderr = invoke(tmp_path, "--judge", "anthropic:claude-sonnet-4-5", "--no-students")
    assert code == 1
    assert "generator openai:gpt-4o: openai models need OPENAI_API_KEY" in stderr
    assert "judge anthropic:claude-sonnet-4-5: anthropic models need ANTHROPIC_API_KEY" in stderr
    assert "stages:" not in stderr and "profiling" not in stderr


def test_a_handler_file_that_does_not_parse_is_refused_before_anything_is_imported_or_run(tmp_path) -> None:
    handler = tmp_path / "typo.py"
    handler.write_text("class H:\n    def records(self)\n        pass\n")
    result = CliRunner().invoke(app, ["author", "--handler", str(handler), "--task", "temperature questions",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert f"the handler file {handler} does not parse: expected ':' (line 2)" in result.stderr
    assert "stages:" not in result.stderr and not (tmp_path / "checkpoints.sqlite").exists()


def test_a_handler_whose_data_cannot_be_read_is_reported_before_the_header(tmp_path) -> None:
    handler = tmp_path / "broken_handler.py"
    handler.write_text(BROKEN_HANDLER)
    code, _, stderr = invoke(tmp_path, "--no-judges", "--no-students", handler=str(handler))
    assert code == 1 and "Broken.records() raised RuntimeError: the data folder is empty" in stderr
    assert "stages:" not in stderr and "stopped after the header" not in stderr
