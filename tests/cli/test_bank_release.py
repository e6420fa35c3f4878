"""The command line end to end: db upgrade, bank create and import, release create, export,
verify, db downgrade; `--json` output; exit codes; an export of stored items loads neither the
sandbox nor the migrations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.templates_bank.storage import head_revision


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # a runner function
    monkeypatch.delenv("ITEMSMITH_DATABASE_URL", raising=False)
    monkeypatch.setenv("ITEMSMITH_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner(env={"COLUMNS": "400"})

    def invoke(*args: str, code: int = 0, input: str | None = None) -> str:  # noqa: A002 - click's name
        result = runner.invoke(app, list(args), input=input)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def test_release_and_export_from_the_command_line(run, tmp_path: Path) -> None:
    assert f"to {head_revision()}" in run("bank", "list")  # a fresh database is migrated first
    assert f"at revision {head_revision()}" in run("db", "upgrade")
    run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice", "--task", "trend questions")
    assert "already" in run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice", code=1)
    assert "Invalid value" in run("bank", "create", "Bad Name", "--handler", "synthetic", "--owner", "a", code=2)
    run("bank", "import-curated", "trends", "--reviewer", "alice", "-t", "feat_trend_detect_tf",
        "-t", "feat_trend_classify")
    assert "approved" in run("bank", "show", "trends")
    assert "trends" in run("bank", "list")
    out = run("release", "create", "trends", "--by", "alice", "--seeds", "2", "-n", "3", "--note", "first")
    assert "released trends@1: 2 templates, 12 items" in out
    assert "trends@1" in run("release", "list", "trends")
    manifest = json.loads(run("release", "show", "trends@latest"))
    assert manifest["counts"]["items"] == 12 and manifest["note"] == "first"
    for fmt in ("jsonl", "lm-eval"):
        assert "12 items" in run("release", "export", "trends@1", "--format", fmt, "--out", str(tmp_path / fmt))
    assert len((tmp_path / "jsonl" / "data.jsonl").read_text().splitlines()) == 12
    assert "trends@1 reproduces: 12 items in 2 templates, byte for byte as stored" in run("release", "verify", "trends@1")
    assert "exists" in run("release", "export", "trends@1", "-f", "jsonl", "-o", str(tmp_path / "jsonl"), code=1)
    assert "no release 2" in run("release", "export", "trends@2", "-f", "jsonl", "-o", str(tmp_path / "x"), code=1)
    assert "does not carry plots" in run("release", "export", "trends@1", "-f", "inspect", "--plots", "-o",
                                         str(tmp_path / "x"), code=1)
    # wrong command lines: exit 2
    assert "BANK@NUMBER" in run("release", "show", "trends@one", code=2)
    assert "use one of" in run("release", "export", "trends@1", "-f", "xlsx", "-o", str(tmp_path / "y"), code=2)
    (tmp_path / "a_file").write_text("")
    run("release", "export", "trends@1", "-f", "jsonl", "-o", str(tmp_path / "a_file"), code=2)  # --out: a folder

    # downgrade asks first; "n" (or no terminal) leaves the database as it is
    assert "Aborted" in run("db", "downgrade", "base", input="n\n", code=1)
    assert head_revision() in run("db", "current")
    assert "at revision None" in run("db", "downgrade", "base", input="y\n")
    run("db", "upgrade")
    assert "at revision None" in run("db", "downgrade", "base", "--yes")


def test_release_create_reuses_runs_unless_told_to_regenerate(run, monkeypatch: pytest.MonkeyPatch) -> None:
    from itemsmith.templates_bank import releases

    generated: list[int] = []
    real = releases.regenerate

    def counting(runs, **kwargs):
        generated.append(sum(len(r.seeds) for r in runs))
        return real(runs, **kwargs)

    monkeypatch.setattr(releases, "regenerate", counting)
    run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice")
    run("bank", "import-curated", "trends", "--reviewer", "alice", "-t", "feat_trend_detect_tf")
    checksums = [json.loads(run("release", "create", "trends", "--by", "alice", "--seeds", "2", "-n", "2", *extra,
                                "--json"))["checksum"] for extra in ((), (), ("--regenerate",))]
    assert generated == [2, 0, 2] and len(set(checksums)) == 1


def test_json_output_of_the_bank_and_release_commands(run, tmp_path: Path) -> None:
    upgraded = json.loads(run("db", "upgrade", "--json"))
    assert upgraded["revision"] == upgraded["head"] == head_revision()
    bank = json.loads(run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice", "--json"))
    assert bank["name"] == "trends" and bank["owner"] == "alice"
    imported = json.loads(run("bank", "import-curated", "trends", "--reviewer", "alice", "-t", "feat_trend_classify",
                              "--json"))
    assert [v["template_key"] for v in imported] == ["feat_trend_classify"]
    shown = json.loads(run("bank", "show", "trends", "--json"))
    assert shown["bank"]["id"] == bank["id"] and shown["versions"][0]["status"] == "approved"
    assert [b["name"] for b in json.loads(run("bank", "list", "--json"))] == ["trends"]
    manifest = json.loads(run("release", "create", "trends", "--by", "alice", "-n", "2", "--json"))
    assert (manifest["bank"], manifest["release"], manifest["counts"]["items"]) == ("trends", 1, 2)
    assert [m["release"] for m in json.loads(run("release", "list", "trends", "--json"))] == [1]
    assert json.loads(run("release", "show", "trends@1", "--json")) == manifest
    exported = json.loads(run("release", "export", "trends@1", "-f", "jsonl", "-o", str(tmp_path / "e"), "--json"))
    assert exported == {"release": "trends@1", "format": "jsonl", "out": str(tmp_path / "e"), "items": 2}


def test_bank_show_says_which_handler_each_template_runs_on(run) -> None:
    run("db", "upgrade")
    run("bank", "create", "wx", "--handler", "weather", "--owner", "alice")
    run("bank", "import-curated", "wx", "--reviewer", "alice", "-t", "feat_trend_detect_tf")
    shown = run("bank", "show", "wx")
    assert "bank wx (handler weather; its templates use synthetic)" in shown
    (line,) = [line for line in shown.splitlines() if line.startswith("feat_trend_detect_tf")]
    assert " synthetic " in line


EXPORT_PROBE = textwrap.dedent('''
    import json, sys
    from typer.testing import CliRunner
    from itemsmith.cli.app import app
    result = CliRunner().invoke(app, ["release", "export", "trends@1", "-f", sys.argv[1], "-o", sys.argv[2]])
    print(json.dumps({"code": result.exit_code, "output": result.output, "loaded": sorted(sys.modules)}))
''')
# what reading stored items never needs: templates run only for `release create` and `verify`; pandas
# (pyarrow's `pa.array` imports it: row groups are parsed from JSON instead); the PostgreSQL dialect
NOT_FOR_STORED_ITEMS = {"itemsmith.sandbox", "alembic", "matplotlib", "torch", "pandas", "sqlalchemy.dialects.postgresql"}
PARQUET = {"pyarrow", "numpy"}
WITH_YAML = {"hf", "lm-eval"}  # the dataset card's front matter, the task configs


def test_an_export_of_stored_items_loads_no_sandbox_migrations_pandas_or_parquet_where_none_is_written(
        run, tmp_path: Path) -> None:
    run("bank", "create", "trends", "--handler", "synthetic", "--owner", "alice")
    run("bank", "import-curated", "trends", "--reviewer", "alice", "-t", "feat_trend_classify")
    run("release", "create", "trends", "--by", "alice", "-n", "2")
    for fmt, parquet in (("jsonl", False), ("inspect", False), ("hf", True), ("lm-eval", True)):
        done = subprocess.run([sys.executable, "-c", EXPORT_PROBE, fmt, str(tmp_path / fmt)], capture_output=True,
                              text=True, timeout=600, check=True, env=os.environ)
        outcome = json.loads(done.stdout)
        assert outcome["code"] == 0 and "2 items" in outcome["output"], outcome["output"]
        loaded = {name.split(".")[0] if not name.startswith(("itemsmith.", "sqlalchemy.dialects."))
                  else ".".join(name.split(".")[:2 if name.startswith("itemsmith.") else 3])
                  for name in outcome["loaded"]}
        assert loaded.isdisjoint(NOT_FOR_STORED_ITEMS), f"{fmt}: {sorted(loaded & NOT_FOR_STORED_ITEMS)}"
        assert (loaded & PARQUET) == (PARQUET if parquet else set()), fmt  # for parquet alone
        assert ("yaml" in loaded) == (fmt in WITH_YAML), fmt
