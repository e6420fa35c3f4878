"""The command line end to end: db upgrade, bank create and import, release create, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.templates_bank.storage import head_revision


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a runner function
    monkeypatch.delenv("ITEMSMITH_DATABASE_URL", raising=False)
    monkeypatch.setenv("ITEMSMITH_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()

    def invoke(*args: str, code: int = 0) -> str:
        result = runner.invoke(app, list(args))
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def test_release_and_export_from_the_command_line(run, tmp_path: Path) -> None:  # noqa: ANN001
    assert "itemsmith db upgrade" in run("bank", "status", code=2)  # not migrated yet: told what to do
    assert f"at revision {head_revision()}" in run("db", "upgrade")
    run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice", "--task", "trend questions")
    assert "exists already" in run("bank", "create", "trends", "--handler", "synthetic", "--owner", "a", code=2)
    run("bank", "import-curated", "trends", "--reviewer", "alice", "-t", "feat_trend_detect_tf",
        "-t", "feat_trend_classify")
    assert "approved" in run("bank", "status", "trends")
    out = run("release", "create", "trends", "--by", "alice", "--seeds", "2", "-n", "3", "--note", "first")
    assert "released trends@1: 2 templates, 12 items" in out
    assert "trends@1" in run("release", "list", "trends")
    manifest = json.loads(run("release", "show", "trends@latest"))
    assert manifest["counts"]["items"] == 12 and manifest["note"] == "first"
    for fmt in ("jsonl", "lm-eval"):
        assert "12 items" in run("export", "trends@1", "--format", fmt, "--out", str(tmp_path / fmt))
    assert len((tmp_path / "jsonl" / "data.jsonl").read_text().splitlines()) == 12
    assert "exists" in run("export", "trends@1", "-f", "jsonl", "-o", str(tmp_path / "jsonl"), code=2)
    assert "no release 2" in run("export", "trends@2", "-f", "jsonl", "-o", str(tmp_path / "x"), code=2)
    assert "does not carry plots" in run("export", "trends@1", "-f", "inspect", "--plots", "-o",
                                         str(tmp_path / "x"), code=2)
    assert "at revision None" in run("db", "downgrade", "base")
