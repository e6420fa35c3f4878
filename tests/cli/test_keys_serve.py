"""`itemsmith keys create|list|revoke` and `itemsmith serve`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.service.auth import authenticate
from itemsmith.templates_bank.storage import current_revision, head_revision, open_session

runner = CliRunner(env={"COLUMNS": "400"})  # no wrapped error messages


def test_a_created_key_is_printed_once_and_works_until_revoked(database_url: str, engine) -> None:
    created = runner.invoke(app, ["keys", "create", "alice", "--name", "laptop", "--db", database_url])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip()
    assert key.startswith("ism_") and "not shown again" in created.stderr
    with open_session(engine) as session:
        principal = authenticate(session, key)
    assert principal is not None and principal.owner == "alice"

    listed = runner.invoke(app, ["keys", "list", "--db", database_url])
    assert listed.exit_code == 0 and "alice" in listed.stdout and "laptop" in listed.stdout
    assert key not in listed.stdout and key[:10] in listed.stdout and "active" in listed.stdout

    revoked = runner.invoke(app, ["keys", "revoke", str(principal.key_id), "--db", database_url])
    assert revoked.exit_code == 0 and "revoked API key" in revoked.stdout
    with open_session(engine) as session:
        assert authenticate(session, key) is None
    assert "revoked" in runner.invoke(app, ["keys", "list", "--owner", "alice", "--db", database_url]).stdout
    assert runner.invoke(app, ["keys", "list", "--owner", "bob", "--db", database_url]).stdout == ""


def test_key_commands_refuse_bad_input(database_url: str, engine) -> None:
    blank = runner.invoke(app, ["keys", "create", "  ", "--db", database_url])
    assert blank.exit_code == 2 and "needs an owner" in blank.stderr  # a wrong command line
    unknown = runner.invoke(app, ["keys", "revoke", "999", "--db", database_url])
    assert unknown.exit_code == 1 and "no API key with id 999" in unknown.stderr  # a failed operation


def test_key_commands_migrate_a_fresh_database_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    result = runner.invoke(app, ["keys", "create", "alice", "--db", url])
    assert result.exit_code == 0, result.output
    assert f"from revision (empty) to {head_revision()}" in result.stderr and current_revision(url) == head_revision()


def test_key_commands_print_json(database_url: str, engine) -> None:
    created = runner.invoke(app, ["keys", "create", "carol", "--db", database_url, "--json"])
    assert created.exit_code == 0, created.output
    record = json.loads(created.stdout)
    assert record["owner"] == "carol" and record["key"].startswith("ism_") and record["revoked_at"] is None
    listed = json.loads(runner.invoke(app, ["keys", "list", "--db", database_url, "--json"]).stdout)
    assert [k["id"] for k in listed] == [record["id"]] and "key" not in listed[0]
    revoked = json.loads(runner.invoke(app, ["keys", "revoke", str(record["id"]), "--db", database_url,
                                             "--json"]).stdout)
    assert revoked["revoked_at"] is not None


def test_serve_migrates_the_database_then_runs_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'served.sqlite'}"
    served: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **options: served.update(app=app, host=host,
                                                                                       port=port, **options))
    result = runner.invoke(app, ["serve", "--host", "127.0.0.1", "--port", "8123", "--db", url])
    assert result.exit_code == 0, result.output
    assert current_revision(url) == head_revision()
    assert served["host"] == "127.0.0.1" and served["port"] == 8123
    with TestClient(served["app"]) as client:
        assert client.get("/health").json()["status"] == "ok"
        assert client.get("/banks").status_code == 401
