"""docs/benchmarks.md and the benchmark history (`benchmarks/render_results.py` over
benchmarks/results/history/*.toml): every data file validates and renders, every script and
history the page names exists, every flag of its commands is one the script defines, and every
script in benchmarks/ is named on the page."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "benchmarks.md"
SCRIPT = ROOT / "benchmarks" / "render_results.py"
# Named on the page though they measure nothing themselves: the renderer and a helper a benchmark imports.
NOT_BENCHMARKS = {"render_results.py", "queued_runner.py"}


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_results", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


render_results = _load()


def _commands(text: str) -> list[str]:
    """The indented command lines of a Markdown page."""
    return [line.strip() for line in text.splitlines() if line.startswith("    ") and "benchmarks/" in line]


def test_every_history_validates_and_renders_as_a_section_with_its_tables() -> None:
    histories = render_results.histories()
    assert len(histories) >= 15
    text = render_results.render()
    for history in histories.values():
        assert f"\n## {history.heading}\n" in text
        for block in history.block:
            if block.rows:
                assert block.markdown().count("\n") == len(block.rows) + 1
                assert f"| {' | '.join(block.rows[0])} |" in text
        for script in history.scripts:
            assert (ROOT / script).is_file(), script


def test_the_script_renders_one_benchmark_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "history.md"
    subprocess.run([sys.executable, str(SCRIPT), "quick_start", "--out", str(out)], check=True, timeout=120)
    text = out.read_text()
    assert "## Quick start" in text and "## Semantic verification" not in text
    refused = subprocess.run([sys.executable, str(SCRIPT), "no_such_benchmark"], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode != 0 and "no history for no_such_benchmark" in refused.stderr


def test_a_row_that_does_not_fit_its_columns_or_a_block_of_two_kinds_is_refused() -> None:
    with pytest.raises(ValidationError, match="a row of 1 cells under 2 columns"):
        render_results.Block(columns=["date", "wall"], rows=[["2026-12-01"]])
    with pytest.raises(ValidationError, match="exactly one of"):
        render_results.Block(text="prose", command="python benchmarks/quick_start.py")
    with pytest.raises(ValidationError, match="both columns and rows"):
        render_results.Block(columns=["date"])


def test_every_script_and_history_the_page_names_exists() -> None:
    page = PAGE.read_text()
    scripts = set(re.findall(r"benchmarks/[\w/]+\.py", page))
    assert scripts
    for script in scripts:
        assert (ROOT / script).is_file(), f"docs/benchmarks.md names {script}, which does not exist"
    named = {name for line in re.findall(r"History: (.+?)(?:\.|$)", page.replace("\n", " "))
             for name in re.findall(r"`(\w+)`", line)}
    histories = set(render_results.histories())
    assert named - histories == set(), "histories named on the page without a data file"
    assert histories - named == set(), "data files the page never points to"


def test_every_benchmark_script_is_on_the_page() -> None:
    page = PAGE.read_text()
    scripts = {path.name for path in (ROOT / "benchmarks").glob("*.py")} - NOT_BENCHMARKS
    assert sorted(name for name in scripts if f"benchmarks/{name}" not in page) == []


def _undefined_flags(command: str) -> list[str]:
    """The flags of a command line that its benchmark script never defines (as a quoted option string)."""
    script = re.search(r"benchmarks/\w+\.py", command)
    assert script, command
    source = (ROOT / script.group(0)).read_text()
    return [flag for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", command) if f'"{flag}"' not in source]


def test_every_flag_of_the_pages_commands_is_defined_by_its_script() -> None:
    commands = _commands(PAGE.read_text())
    assert len(commands) >= 20
    assert {command: _undefined_flags(command) for command in commands if _undefined_flags(command)} == {}


def test_the_flag_check_sees_a_flag_the_script_does_not_define() -> None:
    """Control: the check above fails on a command with a made-up flag, and not on a real one."""
    (made_up, real) = _commands("    python benchmarks/quick_start.py --out x --no-such-flag\n"
                                "    python benchmarks/release_speed.py --synthetic 10\n")
    assert _undefined_flags(made_up) == ["--no-such-flag"]
    assert _undefined_flags(real) == []
