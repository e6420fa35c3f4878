"""Commands a local user runs hand the sandbox limits they use to every operation explicitly
(`cli._common.local_sandbox`, never through `os.environ`): on a machine without some isolation
layer each of them runs, says which layer is missing, and leaves the environment as it was; an
operator who sets ``ITEMSMITH_SANDBOX_ALLOW_DEGRADED=false`` gets the refusal instead. The scripted
models here stand in for real ones (recorded replies)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.templates_bank.curated import get_curated

TEMPLATE = "exam_trend_direction"
MISSING = "WITHOUT these isolation layers: netns"


@pytest.fixture
def without_netns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_SANDBOX_DISABLED_LAYERS", '["netns"]')
    monkeypatch.delenv("ITEMSMITH_SANDBOX_ALLOW_DEGRADED", raising=False)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, list(args))
    return result.exit_code, result.output


def test_every_sandbox_command_runs_degraded_with_explicit_limits_and_says_so(
        without_netns: None, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    source = tmp_path / "template.py"
    source.write_text(get_curated(TEMPLATE).source)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"replies": ["Answer: A"]}))
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"replies": ["Clear and answerable.\nScore: 8"]}))
    setup = [("bank", "create", "local", "--handler", "synthetic", "--owner", "tests", "--db", db),
             ("bank", "import-curated", "local", "--reviewer", "tests", "-t", TEMPLATE, "--db", db)]
    for args in setup:
        code, output = _invoke(*args)
        assert code == 0, output
    commands = {
        "sample": ("sample", "--template", TEMPLATE, "-n", "2"),
        "check-template": ("check-template", str(source), "--handler", "synthetic", "-n", "2"),
        "curated sample": ("curated", "sample", "-t", TEMPLATE, "-n", "2", "--out-file", str(tmp_path / "c.jsonl")),
        "verify": ("verify", str(source), "--handler", "synthetic", "--no-judges", "--no-students",
                   "--no-rederivation", "--json"),
        "release create": ("release", "create", "local", "--by", "tests", "--seeds", "1", "-n", "3", "--db", db),
        "release export": ("release", "export", "local@1", "--format", "jsonl", "--out", str(tmp_path / "export"),
                           "--db", db),
        "release evaluate": ("release", "evaluate", "local@1", "--model", f"scripted:{answers}", "--fresh-seed",
                             "--db", db),
        "release reverify": ("release", "reverify", "local@1", "--judge", f"scripted:{judge}", "--db", db),
    }
    with caplog.at_level(logging.WARNING, logger="itemsmith.sandbox.executor"):
        for name, args in commands.items():
            # a command that left the limits to the settings' defaults would get a strict sandbox (a
            # worker of its own: workers are kept per limits) and fail with "required sandbox
            # isolation layers unavailable: netns", as the operator's case below does
            code, output = _invoke(*args)
            if name == "verify":  # the audit's verdict on the template is not the point: its stages ran
                assert code in (0, 1) and json.loads(output[output.index("{"):])["stages"]["audit"]["ran"], output
            else:
                assert code == 0, f"{name}: {output}"
            assert "ITEMSMITH_SANDBOX_ALLOW_DEGRADED" not in os.environ
    assert MISSING in caplog.text  # said when the degraded worker starts


def test_the_operators_allow_degraded_false_is_kept(without_netns: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_SANDBOX_ALLOW_DEGRADED", "false")
    code, output = _invoke("sample", "--template", TEMPLATE, "-n", "1")
    assert code == 1
    assert "required sandbox isolation layers unavailable: netns" in output
