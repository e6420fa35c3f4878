"""`itemsmith author --bank` and `itemsmith bank import-run` with scripted models: accepted
templates land in the bank with the run's verdicts, stored by the author job's own function,
once (importing again stores nothing twice); bad input fails before any work with a reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    get_bank,
    list_verdicts,
    list_versions,
    open_session,
    upgrade,
)

from .conftest import GOOD, fenced, plan_reply


@pytest.fixture
def bank_db(tmp_path: Path, handler_file: Path) -> str:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        create_bank(session, BankCreate(name="levels", handler=str(handler_file), owner="tests"))
    return url


def _author(handler_file: Path, tmp_path: Path, *extra: str):
    gen = tmp_path / "gen.yaml"
    gen.write_text(json.dumps({"replies": [fenced(GOOD)]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level", "Peak level"])]))
    return CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "water levels",
                                    "--templates", "2", "--generator", f"scripted:{gen}", "--planner",
                                    f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "banked",
                                    "--no-live", *extra])


def test_scripted_author_with_bank_stores_accepted_templates_with_their_verdicts(handler_file: Path, tmp_path: Path,
                                                                                bank_db: str) -> None:
    result = _author(handler_file, tmp_path, "--bank", "levels", "--db", bank_db)
    assert result.exit_code == 0, result.output
    # both slots wrote the same source: one version, the run's verdicts stored on it once
    assert "bank levels: 2 accepted template(s) of run banked (1 stored now, 1 on record already)" in result.output
    assert "not calibrated: the run had no student pool" in result.output
    assert "diversity (off (ITEMSMITH_DIVERSITY_EMBEDDER=off): text similarity only): embedding distance n/a" in result.output
    with open_session(bank_db) as session:
        versions = list_versions(session, get_bank(session, "levels").id)
        verdicts = [list_verdicts(session, v.id) for v in versions]
    assert len(versions) == 1
    stages = [v.stage for v in verdicts[0]]
    assert stages[0] == "structure" and stages[-1] == "decision" and {v.run_id for v in verdicts[0]} == {"banked"}
    assert verdicts[0][-1].payload["accepted"] is True
    # importing the run folder again stores nothing twice
    again = CliRunner().invoke(app, ["bank", "import-run", str(tmp_path / "out" / "banked"), "--bank", "levels",
                                     "--db", bank_db, "--json"])
    assert again.exit_code == 0, again.output
    imported = json.loads(again.stdout)
    assert [t["stored"] for t in imported["templates"]] == [False, False]
    with open_session(bank_db) as session:
        assert [len(list_verdicts(session, v.id)) for v in versions] == [len(verdicts[0])]


def test_author_with_a_missing_bank_fails_before_authoring(handler_file: Path, tmp_path: Path, bank_db: str) -> None:
    result = _author(handler_file, tmp_path, "--bank", "nosuch", "--db", bank_db)
    assert result.exit_code == 1 and "nosuch" in result.output
    assert not (tmp_path / "out" / "banked").exists()


def test_import_run_refuses_a_folder_without_a_report(tmp_path: Path, bank_db: str) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["bank", "import-run", str(tmp_path / "empty"), "--bank", "levels",
                                      "--db", bank_db])
    assert result.exit_code == 1 and "no report.json" in result.output
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "report.json").write_text("{not json")
    result = CliRunner().invoke(app, ["bank", "import-run", str(broken), "--bank", "levels", "--db", bank_db])
    assert result.exit_code == 1 and "not a run report" in result.output


def test_a_bank_of_another_handler_is_refused_before_any_work(handler_file: Path, tmp_path: Path,
                                                              bank_db: str) -> None:
    """The bank holds templates for `handler_file`; a run on the built-in synthetic handler (or on a
    copy of the handler whose data differ) may not fill it, and is refused before it starts."""
    with open_session(bank_db) as session:
        create_bank(session, BankCreate(name="synthetic-bank", handler="synthetic", owner="tests"))
    result = _author(handler_file, tmp_path, "--bank", "synthetic-bank", "--db", bank_db)
    assert result.exit_code == 1
    assert "bank 'synthetic-bank' holds templates for the handler synthetic@sha256:" in result.stderr
    assert "stages:" not in result.stderr and not (tmp_path / "out" / "banked").exists()
    # the same handler class with other data: another handler
    copy = tmp_path / "copy" / handler_file.name
    copy.parent.mkdir()
    copy.write_text(handler_file.read_text())
    (copy.parent / "extra.csv").write_text("a,b\n1,2\n")
    result = _author(copy, tmp_path, "--bank", "levels", "--db", bank_db)
    assert result.exit_code == 1 and "bank 'levels' holds templates for the handler" in result.stderr


def test_import_run_refuses_a_run_of_another_handler(handler_file: Path, tmp_path: Path, bank_db: str) -> None:
    assert _author(handler_file, tmp_path).exit_code == 0
    with open_session(bank_db) as session:
        create_bank(session, BankCreate(name="synthetic-bank", handler="synthetic", owner="tests"))
    result = CliRunner().invoke(app, ["bank", "import-run", str(tmp_path / "out" / "banked"), "--bank",
                                      "synthetic-bank", "--db", bank_db])
    assert result.exit_code == 1 and "holds templates for the handler synthetic@sha256:" in result.stderr
    with open_session(bank_db) as session:
        assert list_versions(session, get_bank(session, "synthetic-bank").id) == []
