"""The command line's grammar and its sandbox commands: `sample`, `check-template`, `handlers list`,
`curated list|sample`; exit codes (1 failed operation, 2 wrong command line) and `--json`; the one
`--reasoning-budget` option of every command that calls models."""

import json

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app

runner = CliRunner(env={"COLUMNS": "400"})  # no wrapped error messages

OK_TEMPLATE = """
def question(num_samples):
    items = []
    for i in range(num_samples):
        values = rng.normal(size=30).cumsum()
        top = int(np.argmax(values))
        wrong = [int(x) for x in rng.choice([j for j in range(30) if j != top], size=3, replace=False)]
        items.append(mc_item("At which index is the series highest?", top, wrong,
                             series=[series(values, name="x")], rationale=f"argmax is {top}"))
    return items
"""

GRAMMAR = {
    (): {"curated", "bank", "release", "author", "sample", "check-template", "verify", "handlers", "db", "keys",
         "serve", "worker", "settings", "judges"},
    ("curated",): {"list", "sample"},
    ("bank",): {"list", "show", "create", "import-curated", "import-run", "import-items"},
    ("release",): {"create", "list", "show", "export", "verify", "evaluate", "reverify", "calibrate", "audit"},
    ("db",): {"upgrade", "downgrade", "current"},
    ("keys",): {"create", "list", "revoke"},
    ("handlers",): {"list"},
    ("judges",): {"validate", "validate-ladder", "list"},
}


def _commands(path: tuple[str, ...]) -> set[str]:
    import typer.main

    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return {name for name, sub in command.commands.items() if not sub.hidden}  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", list(GRAMMAR), ids=lambda p: " ".join(p) or "itemsmith")
def test_the_grammar_is_exactly_the_documented_one(path: tuple[str, ...]) -> None:
    assert _commands(path) == GRAMMAR[path]


def test_old_command_names_are_gone() -> None:
    for old in (["evaluate", "x@1"], ["reverify", "x@1"], ["export", "x@1"], ["bank", "sample"], ["bank", "status"]):
        result = runner.invoke(app, old)
        assert result.exit_code == 2 and "No such command" in result.output, old


def _leaf_commands() -> list[tuple[tuple[str, ...], object]]:
    import typer.main

    leaves = []

    def walk(path: tuple[str, ...], command: object) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            leaves.append((path, command))
            return
        for name, sub in subcommands.items():
            walk((*path, name), sub)

    walk((), typer.main.get_command(app))
    return leaves


def test_flags_mean_one_thing_everywhere() -> None:
    """--json on every command that prints a result; --format is a file format (output, or the input of an
    import), never the series text format;
    --out is always a folder; students are --student."""
    no_result = {("serve",), ("worker",)}
    for path, command in _leaf_commands():
        options = {opt: param for param in command.params for opt in param.opts}  # type: ignore[attr-defined]
        if path not in no_result:
            assert "--json" in options, path
        if "--format" in options:
            assert (options["--format"].help or "").startswith(("Output format", "Input format")), path
        if "--out" in options:
            assert options["--out"].type.file_okay is False, path
        if "--out-file" in options:
            assert options["--out-file"].type.dir_okay is False, path
        assert "--students" not in options, path


MODEL_OPTIONS = {"--model", "--judge", "--student", "--generator", "--planner", "--solver"}
CALLING_MODELS = {("author",), ("verify",), ("release", "evaluate"), ("release", "reverify"), ("judges", "validate")}


def test_every_command_that_calls_models_takes_the_one_reasoning_budget_option() -> None:
    helps = set()
    for path, command in _leaf_commands():
        options = {opt: param for param in command.params for opt in param.opts}  # type: ignore[attr-defined]
        assert (path in CALLING_MODELS) == bool(MODEL_OPTIONS & set(options)), path
        assert (path in CALLING_MODELS) == ("--reasoning-budget" in options), path
        if path in CALLING_MODELS:
            helps.add(options["--reasoning-budget"].help)
    assert len(helps) == 1  # one definition (cli._common.ReasoningBudgetOpt)


@pytest.mark.parametrize("command", [["author", "--handler", "synthetic", "--task", "levels"],
                                     ["verify", "template.py", "--handler", "synthetic"],
                                     ["release", "evaluate", "bank@1", "--model", "openai:gpt-5-nano"],
                                     ["release", "reverify", "bank@1", "--judge", "openai:o3"]],
                         ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(("value", "said"), [("judge", "is not ROLE=TOKENS"), ("judges=8000", "unknown role"),
                                             ("judge=-1", "is not ROLE=TOKENS"), ("judge=999999", "less than or equal")])
def test_a_wrong_reasoning_budget_is_a_usage_error_before_any_work(command: list[str], value: str, said: str) -> None:
    result = runner.invoke(app, [*command, "--reasoning-budget", value])
    assert result.exit_code == 2 and said in result.output and "--reasoning-budget" in result.output


def test_handlers_list_shows_every_builtin():
    result = runner.invoke(app, ["handlers", "list"])
    assert result.exit_code == 0
    for name in ("synthetic", "ecg", "glucose", "stocks", "weather", "italy_power", "basic_motions"):
        assert name in result.output
    assert "unavailable" not in result.output
    listed = json.loads(runner.invoke(app, ["handlers", "list", "--json"]).stdout)
    assert {"synthetic", "ecg"} <= {row["name"] for row in listed} and all(row["available"] for row in listed)


def test_curated_list_shows_curated_templates():
    result = runner.invoke(app, ["curated", "list"])
    assert result.exit_code == 0
    assert "exam_trend_direction" in result.output and "weather_wettest_month" in result.output
    listed = json.loads(runner.invoke(app, ["curated", "list", "--json"]).stdout)
    assert {"exam_trend_direction", "weather_wettest_month"} <= {row["id"] for row in listed}


def test_sample_a_curated_template_prints_items_with_answers():
    result = runner.invoke(app, ["sample", "--template", "exam_trend_direction", "-n", "2", "--text-format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.count("--- item") == 2 and result.output.count("Answer: ") == 2
    assert "Date,Value" in result.output
    items = json.loads(runner.invoke(app, ["sample", "-t", "exam_trend_direction", "-n", "2", "--json"]).stdout)
    assert len(items) == 2 and all(item["options"] for item in items)


def test_sample_unknown_template_is_a_failed_operation_not_a_usage_error():
    result = runner.invoke(app, ["sample", "--template", "exam_trend"])
    assert result.exit_code == 1
    assert "no curated template named 'exam_trend'" in result.output and "exam_trend_direction" in result.output


def test_sample_template_file_without_a_handler_is_a_usage_error(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(OK_TEMPLATE)
    result = runner.invoke(app, ["sample", "--template", str(path)])
    assert result.exit_code == 2 and "needs --handler" in result.output


def test_check_template_json_ok(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text(OK_TEMPLATE)
    result = runner.invoke(app, ["check-template", str(path), "--handler", "synthetic", "--samples", "3", "--json"])
    payload = json.loads(result.output)
    assert result.exit_code == 0
    assert payload["status"] == "ok" and len(payload["items"]) == 3 and payload["error"] is None
    assert set(payload) == {"status", "items", "error", "elapsed_ms"}


def test_check_template_missing_file_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["check-template", str(tmp_path / "nope.py"), "--handler", "synthetic"])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_check_template_json_statuses_and_exit_codes(tmp_path):
    cases = {
        "refused": "import os\ndef question(n):\n    return []\n",
        "error": "def question(n):\n    return [1 / 0]\n",
        "killed": "def question(n):\n    while True:\n        pass\n",
        "rejected": "def question(n):\n    return [{'question': 'q', 'options': ['a'], 'answer_index': 0}] * n\n",
    }
    for status, source in cases.items():
        path = tmp_path / f"{status}.py"
        path.write_text(source)
        result = runner.invoke(app, ["check-template", str(path), "--handler", "synthetic", "--json", "--wall-s", "2"])
        payload = json.loads(result.output)
        assert payload["status"] == status, (status, payload)
        assert payload["error"]
        assert result.exit_code == 1


def test_curated_sample_writes_jsonl_with_template_tags(tmp_path):
    out = tmp_path / "items.jsonl"
    result = runner.invoke(app, ["curated", "sample", "-t", "exam_trend_direction", "-t", "weather_wettest_month",
                                 "-n", "2", "--seed", "3", "--out-file", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"out_file": str(out), "templates": 2, "items": 4, "failed": {}}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4
    assert {r["template_id"] for r in rows} == {"exam_trend_direction", "weather_wettest_month"}
    assert all(r["category"] and r["concepts"] and r["options"] for r in rows)


def test_curated_sample_usage_errors(tmp_path):
    result = runner.invoke(app, ["curated", "sample", "--out-file", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "either --all or" in result.output
    result = runner.invoke(app, ["curated", "sample", "--all", "--out-file", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output
    result = runner.invoke(app, ["curated", "sample", "-t", "no_such", "--out-file", str(tmp_path / "y.jsonl")])
    assert result.exit_code == 1 and "no curated template named 'no_such'" in result.output


@pytest.mark.parametrize("command", [["verify", "TEMPLATE", "--handler", "synthetic", "--no-judges", "--no-students"],
                                     ["author", "--handler", "synthetic", "--task", "trends", "--templates", "1"],
                                     ["release", "evaluate", "nobank@1", "--model", "scripted:x.json"]],
                         ids=["verify", "author", "release evaluate"])
def test_a_malformed_model_variable_fails_the_command_with_its_name(tmp_path, monkeypatch, command):
    template = tmp_path / "t.py"
    template.write_text("def question(num_samples):\n    return []\n")
    monkeypatch.setenv("ITEMSMITH_GENERATOR", "claude")  # not provider:model
    result = runner.invoke(app, [str(template) if a == "TEMPLATE" else a for a in command])
    assert result.exit_code == 1, result.output
    assert "ITEMSMITH_GENERATOR: model spec 'claude' is not 'provider:model'" in result.output
    assert isinstance(result.exception, SystemExit)  # a message, not a traceback
