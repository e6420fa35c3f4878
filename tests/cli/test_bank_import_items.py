"""`itemsmith bank import-items` on hostile files: what a JSON parser accepts and the schema does
not is printed as an error naming its row and column (exit 1, nothing stored), never a traceback;
`--no-audit` stores without the static audit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app

from ..templates_bank.test_static_items import tse_row


def write(path: Path, field: str, raw: str) -> Path:
    rng = np.random.default_rng(5)
    rows = [tse_row(1, i, rng) for i in range(3)]
    rows[1][field] = "@@RAW@@"
    path.write_text(json.dumps(rows).replace('"@@RAW@@"', raw))
    return path


@pytest.mark.parametrize(("field", "raw", "message"), [
    ("ts", f"[1.0, {'9' * 5000}, 2.0]", "row 2 (ts): series 'ts' holds <an integer of 5000 digits> at position 1"),
    ("ts", "[" * 100_000 + "]" * 100_000, "row 2 (ts): the row is nested too deeply to read"),
    ("ts", "[1.0, NaN, 2.0]", "row 2 (ts): series 'ts' holds NaN at position 1"),
    ("options", '["up", {"a": 1}, "flat", "cycle"]', "row 2 (options): option 1 is {'a': 1}"),
    ("question", "[1, 2]", "row 2 (question): the question must be text, got [1, 2]"),
])
def test_red_team_a_hostile_row_is_an_error_about_that_row(tmp_path: Path, field: str, raw: str,
                                                           message: str) -> None:
    source = write(tmp_path / "qa_dataset.json", field, raw)
    db = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    result = CliRunner().invoke(app, ["bank", "import-items", "exam", str(source), "--format", "tse", "--db", db])
    assert result.exit_code == 1, result.output
    assert "1 bad row(s), nothing imported" in result.output and message in result.output
    assert "Traceback" not in result.output and len(result.output) < 1000
    listed = CliRunner().invoke(app, ["bank", "list", "--db", db])
    assert "exam" not in listed.output


def test_no_audit_stores_the_groups_without_auditing_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    source = tmp_path / "qa_dataset.json"
    source.write_text(json.dumps([tse_row(tid, i, rng) for tid in (1, 2) for i in range(3)]))
    db = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    result = CliRunner().invoke(app, ["bank", "import-items", "exam", str(source), "--format", "tse", "--no-audit",
                                      "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{"):])  # after the note that the database was migrated
    assert (report["rows"], report["groups"], report["new_versions"], report["audited"]) == (6, 2, 2, False)
