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


def _settings_classes_in_the_source() -> dict[str, set[str]]:
    """Every class deriving from BaseSettings or LayerSettings in the installed packages, as "module:Class",
    by base."""
    found: dict[str, set[str]] = {"BaseSettings": set(), "LayerSettings": set()}
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in {"tests", "benchmarks", ".venv", ".venv-ci", "build"}:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts if parts[0] == "itemsmith" else ("itemsmith", *parts))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    if getattr(base, "id", "") in found:
                        found[base.id].add(f"{module}:{node.name}")
    return found


def test_one_base_reads_the_environment_and_every_layer_model_is_listed() -> None:
    found = _settings_classes_in_the_source()
    assert found["BaseSettings"] == {"itemsmith.layer_settings:LayerSettings"}
    assert found["LayerSettings"] == {target for _, target in SETTINGS_MODELS}


def test_one_settings_model_per_layer_named_by_the_rule() -> None:
    layers = [layer for layer, _ in SETTINGS_MODELS]
    assert len(layers) == len(set(layers)), "two settings models in one layer"
    for _, target in SETTINGS_MODELS:
        module, name = target.split(":")
        assert module.endswith(".settings") and name.endswith("Settings"), target


def test_the_operator_guide_holds_the_generated_table() -> None:
    text = OPERATOR_DOC.read_text()
    table = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    assert table == settings_markdown(), "run `itemsmith settings --markdown` and paste it into docs/operator.md"


def test_every_variable_has_a_meaning_and_one_name() -> None:
    rows = json.loads(CliRunner().invoke(app, ["settings", "--json"]).stdout)
    assert all(row["description"] for row in rows), [row["variable"] for row in rows if not row["description"]]
    names = [name for row in rows for key in ("variable", "old_names") for name in row[key].split(" / ") if name]
    assert len(names) == len(set(names)), "two settings read the same variable"
    assert "ITEMSMITH_DATABASE_URL" in names and "ITEMSMITH_API_DATABASE_URL" not in names  # code only


def test_the_table_shows_no_machine_specific_default() -> None:
    assert str(Path.home()) not in settings_markdown()
