"""One database setting for the command line, the server and the workers."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.service.settings import ServiceSettings


def test_the_service_reads_the_one_database_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ITEMSMITH_DATABASE_URL", "postgresql://db.example/itemsmith")
    monkeypatch.setenv("ITEMSMITH_API_DATABASE_URL", "sqlite:///elsewhere.sqlite")  # not a setting any more
    assert ServiceSettings().database_url == "postgresql://db.example/itemsmith"
    monkeypatch.delenv("ITEMSMITH_DATABASE_URL")
    monkeypatch.setenv("ITEMSMITH_DATA_DIR", str(tmp_path))
    assert ServiceSettings().database_url == f"sqlite:///{tmp_path / 'itemsmith.sqlite'}"
    # code (``itemsmith serve --db``) may still give one explicitly
    assert ServiceSettings(database_url="sqlite:///given.sqlite").database_url == "sqlite:///given.sqlite"


def test_the_worker_takes_the_same_db_option_as_every_command(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    pytest.importorskip("celery")
    monkeypatch.setenv("ITEMSMITH_DATABASE_URL", "sqlite:///restored-after-the-test.sqlite")
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["worker", "--db", url])
    assert result.exit_code == 1 and "itemsmith db upgrade" in result.output and "new.sqlite" in result.output
    assert ServiceSettings().database_url == url  # what the worker's jobs will use
