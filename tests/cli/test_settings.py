"""`itemsmith settings` lists every variable of every settings model, and docs/operator.md holds its table."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.cli.settings import SETTINGS_MODELS, settings_markdown

ROOT = Path(__file__).resolve().parents[2]
OPERATOR_DOC = ROOT / "docs" / "operator.md"
BEGIN, END = "<!-- settings:begin -->\n", "<!-- settings:end -->"


def _settings_classes_in_the_source() -> set[str]:
    """Every class deriving from BaseSettings in the installed packages, as "module:Class"."""
    found = set()
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in {"tests", "benchmarks", ".venv", ".venv-ci"}:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "BaseSettings" for b in node.bases):
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                found.add(f"itemsmith.{module}:{node.name}")
    return found


def test_every_settings_model_is_listed() -> None:
    assert {target for _, target in SETTINGS_MODELS} == _settings_classes_in_the_source()


def test_the_operator_guide_holds_the_generated_table() -> None:
    text = OPERATOR_DOC.read_text()
    table = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    assert table == settings_markdown(), "run `itemsmith settings --markdown` and paste it into docs/operator.md"


def test_every_variable_has_a_meaning_and_one_name() -> None:
    rows = json.loads(CliRunner().invoke(app, ["settings", "--json"]).stdout)
    assert all(row["description"] for row in rows), [row["variable"] for row in rows if not row["description"]]
    names = [name for row in rows for name in row["variable"].split(" / ")]
    assert len(names) == len(set(names)), "two settings read the same variable"
    assert "ITEMSMITH_DATABASE_URL" in names and "ITEMSMITH_API_DATABASE_URL" not in names  # code only


def test_the_table_shows_no_machine_specific_default() -> None:
    assert str(Path.home()) not in settings_markdown()
