"""One database setting for the command line, the server and the workers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
    from itemsmith.service.jobs import supervisor, upgrade_database

    monkeypatch.setenv("ITEMSMITH_DATABASE_URL", "sqlite:///restored-after-the-test.sqlite")
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    runner = CliRunner(env={"COLUMNS": "400"})
    result = runner.invoke(app, ["worker", "--db", url])
    assert result.exit_code == 1 and "itemsmith db upgrade" in result.output and "new.sqlite" in result.output
    upgrade_database(url)
    started: dict[str, Any] = {}
    monkeypatch.setattr(supervisor, "supervise", lambda command, *, env=None: started.update(env=env) or 0)
    result = runner.invoke(app, ["worker", "--db", url])
    assert result.exit_code == 0, result.output
    assert started["env"]["ITEMSMITH_DATABASE_URL"] == url  # what the jobs in the Celery child use
    assert os.environ["ITEMSMITH_DATABASE_URL"] == "sqlite:///restored-after-the-test.sqlite"  # ours is left alone
