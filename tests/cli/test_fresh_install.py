"""On a fresh install the commands work without `itemsmith db upgrade`: the CLI migrates
an empty database (and one of an older itemsmith) itself, as `serve` does, and refuses only a
database at a revision it does not know (a newer itemsmith's), leaving it untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.service.auth import authenticate
from itemsmith.templates_bank.storage import VERSION_TABLE, current_revision, get_engine, head_revision, open_session

runner = CliRunner()


@pytest.fixture
def fresh_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default database of a fresh install: ITEMSMITH_DATA_DIR with no database in it yet."""
    monkeypatch.delenv("ITEMSMITH_DATABASE_URL", raising=False)
    monkeypatch.setenv("ITEMSMITH_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_the_readme_service_steps_run_on_a_fresh_install(fresh_data_dir: Path) -> None:
    created = runner.invoke(app, ["keys", "create", "alice", "--name", "laptop", "--json"])
    assert created.exit_code == 0, created.output
    assert "migrated the bank database" in created.stderr
    key = json.loads(created.stdout)["key"]
    url = f"sqlite:///{fresh_data_dir / 'itemsmith.sqlite'}"
    assert current_revision(url) == head_revision()
    with open_session(url) as session:
        assert authenticate(session, key) is not None
    bank = runner.invoke(app, ["bank", "create", "trends", "--handler", "synthetic", "--owner", "alice"])
    assert bank.exit_code == 0, bank.output
    assert "migrated" not in bank.stderr  # migrated once
    assert "trends" in runner.invoke(app, ["bank", "list"]).stdout


def test_a_database_of_an_older_itemsmith_is_migrated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    assert runner.invoke(app, ["db", "upgrade", "--db", url, "--revision", "0002"]).exit_code == 0
    listed = runner.invoke(app, ["bank", "list", "--db", url])
    assert listed.exit_code == 0, listed.output
    assert f"from revision 0002 to {head_revision()}" in listed.stderr and current_revision(url) == head_revision()


def test_a_database_at_an_unknown_revision_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.sqlite'}"
    assert runner.invoke(app, ["db", "upgrade", "--db", url]).exit_code == 0
    with get_engine(url).begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '9999_from_the_future'"))
    for command in (["keys", "create", "alice"], ["bank", "list"]):
        result = runner.invoke(app, [*command, "--db", url])
        assert result.exit_code == 1 and "does not know" in result.stderr and "upgrade itemsmith" in result.stderr
    assert current_revision(url) == "9999_from_the_future"
