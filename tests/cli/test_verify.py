"""`itemsmith verify`: one template through the stages `author` runs, the same report; --json's
contract (accepted, errored, stage, reasons, usage, stages), exit codes 0 accepted / 1 rejected /
2 wrong command line (3, errored, against the hosted fakes: tests/test_hosted_contract_cli.py);
with a scripted solver the re-derivation stage rejects a template keyed on another window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app

from ..template_sources import WINDOW_MEAN

runner = CliRunner(env={"COLUMNS": "400"})

# the key is the mean of the next window, not of the one shown: the audit recomputes "the mean" and rejects it
SHIFTED = WINDOW_MEAN.replace("key, wrong = numeric_options(float(window.mean())",
                       "n = len(window)\n        key, wrong = numeric_options(float(values[start + n:start + 2 * n].mean())")
# the same flaw under a question naming no statistic the audit recomputes: only the solver can tell
SHIFTED_UNNAMED = SHIFTED.replace("What is the mean value of the series shown?",
                                  "Which value is the balance point of the readings shown?")
# the key is always the smallest option: the item audit rejects it
SHORTCUT = '''def question(num_samples):
    items = []
    for _ in range(num_samples):
        values = rng.normal(size=30).cumsum()
        answer = round(float(values.max()), 1)
        items.append(mc_item("What is the highest value?", answer, [round(answer + d, 1) for d in (3, 6, 9)],
                             series=[series(values, name="x")]))
    return items
'''
SOLVER = "```python\ndef solve(item):\n    values = item['series'][0]['values']\n    return sum(values) / len(values)\n```"


def _file(tmp_path: Path, source: str, name: str = "template.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def _verify(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["verify", *args, "--handler", "synthetic", "--json", "--no-judges", "--no-students"])
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else {})


def test_verify_json_contract_of_an_accepted_template(tmp_path: Path) -> None:
    code, out = _verify(str(_file(tmp_path, WINDOW_MEAN)))
    assert code == 0 and out["accepted"] is True and out["errored"] is False and out["stage"] is None and out["reasons"]
    assert out["usage"]["calls"] == 0  # no model stage configured
    stages = out["stages"]
    assert list(stages) == ["structure", "audit", "rederivation", "judges", "students", "capability"]
    assert stages["structure"]["accepted"] and stages["audit"]["accepted"] and stages["audit"]["verdict"]["passed"]
    assert stages["judges"] == {**stages["judges"], "status": "off", "ran": False, "verdict": None}
    assert stages["rederivation"]["status"] == "off"  # off in the test environment (ITEMSMITH_REDERIVATION_ENABLED)


def test_verify_rejects_at_the_audit_with_exit_1(tmp_path: Path) -> None:
    code, out = _verify(str(_file(tmp_path, SHORTCUT)))
    assert code == 1 and out["accepted"] is False and out["stage"] == "audit"
    assert out["stages"]["audit"]["accepted"] is False and "without data" in out["reasons"][0]
    assert out["stages"]["rederivation"]["ran"] is False


def test_verify_a_template_that_does_not_run_is_rejected_at_the_structure(tmp_path: Path) -> None:
    code, out = _verify(str(_file(tmp_path, "def question(num_samples):\n    return 1 / 0\n")))
    assert code == 1 and out["stage"] == "structure" and "ZeroDivisionError" in out["reasons"][0]


@pytest.mark.parametrize("args", [["--judge", "local:x", "--no-judges"], ["--no-rederivation", "--solver", "x:y"]])
def test_verify_wrong_command_lines_exit_2(tmp_path: Path, args: list[str]) -> None:
    result = runner.invoke(app, ["verify", str(_file(tmp_path, WINDOW_MEAN)), "--handler", "synthetic", *args])
    assert result.exit_code == 2


def test_verify_a_missing_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", str(tmp_path / "nope.py"), "--handler", "synthetic"])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_verify_with_a_scripted_solver_rejects_a_shifted_window(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_LARGE_SIZE", "30")
    script = _file(tmp_path, json.dumps({"replies": [SOLVER]}), "solver.json")
    code, out = _verify(str(_file(tmp_path, SHIFTED)), "--solver", f"scripted:{script}")
    assert code == 1 and out["stage"] == "audit"
    code, out = _verify(str(_file(tmp_path, SHIFTED_UNNAMED, "unnamed.py")), "--solver", f"scripted:{script}")
    assert code == 1 and out["stage"] == "rederivation"
    verdict = out["stages"]["rederivation"]["verdict"]
    assert verdict["status"] == "disagrees" and verdict["examples"] and "def solve" in verdict["program"]
    code, out = _verify(str(_file(tmp_path, WINDOW_MEAN, "good.py")), "--solver", f"scripted:{script}")
    assert code == 0 and out["stages"]["rederivation"]["verdict"]["status"] == "agrees"
