"""The run header of `itemsmith author`: which stages run and with which models, printed on
stderr before any work, and the flags that turn stages off. The runs here stop right after the
header (a hosted generator without its key), so no model is loaded and nothing is authored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.agents import pipeline as pipeline_module
from itemsmith.cli.app import app


@pytest.fixture(autouse=True)
def no_keys_builtin_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ITEMSMITH_DEFAULT_JUDGES", "ITEMSMITH_DEFAULT_STUDENTS", "OPENAI_API_KEY",
                 "ITEMSMITH_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def installed_only(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    monkeypatch.setattr(pipeline_module, "installed", lambda name: name in names)
    monkeypatch.setattr(pipeline_module.llamacpp, "llama_available", lambda: True)


def invoke(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of a run that fails right after its header (no OpenAI key)."""
    result = CliRunner().invoke(app, ["author", "--handler", "weather", "--task", "temperature questions",
                                      "--generator", "openai:gpt-4o", "--out", str(tmp_path), "--no-live", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_header_shows_the_default_local_pipeline_before_any_work(monkeypatch, tmp_path) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    code, stdout, stderr = invoke(tmp_path, "--json")
    assert code == 1 and "OPENAI_API_KEY" in stderr and stdout == ""  # the header is on stderr, even with --json
    lines = stderr.splitlines()
    assert "generator: openai:gpt-4o" in lines
    assert any(line.startswith("  structure         on: in the sandbox, 2 worker(s)") for line in lines)
    _, _, restarting = invoke(tmp_path, "--restart-broken")  # the flag reaches the run (default: local only)
    assert ("generator: openai:gpt-4o; code that does not run is not refined: the next round restarts without the "
            "curated example"
            in restarting.splitlines())
    assert "  item audit        on: blind solvers and item checks, no model" in lines
    assert any(line.startswith("  judge panel       on: local:qwen2.5-coder-1.5b; default panel") for line in lines)
    assert any(line.startswith("  student pool      on: local:smollm2-135m@1, local:qwen2.5-coder-0.5b@2, "
                               "local:qwen2.5-coder-1.5b@3; default ladder") for line in lines)
    assert any(line.startswith("  capability filter on: accuracy against rank 1 < 2 < 3") for line in lines)


def test_header_names_missing_models_and_the_filter_it_turns_off(monkeypatch, tmp_path) -> None:
    installed_only(monkeypatch, "smollm2-135m")
    code, _, stderr = invoke(tmp_path)
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
