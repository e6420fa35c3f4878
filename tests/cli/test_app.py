"""The command line's start-up (`cli.app`): ``--help`` of every command and a wrong command line are
answered without importing data or model libraries, in a fresh interpreter, so that they come back
at about the speed of importing Typer (the timing is benchmarks/cli_startup.py's); and the root's
listing of the commands, written down so that it imports none of them, says what each command's
own help says."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import typer.main
from typer._click.utils import make_default_short_help

from itemsmith.cli.app import COMMANDS, app

# libraries a command may need for its work, never to parse its command line (pydantic only where a
# model spec, a student or a request is given and checked)
HEAVY = ("pandas", "numpy", "pyarrow", "scipy", "matplotlib", "sklearn", "torch", "langchain_core", "langgraph",
         "openai", "anthropic", "httpx", "llama_cpp", "sqlalchemy", "alembic", "fastapi", "uvicorn", "celery",
         "redis", "psycopg", "rich", "itemsmith.sandbox", "itemsmith.items.schema", "itemsmith.agents.authoring.run")

PROBE = textwrap.dedent('''
    import json, sys
    from typer.testing import CliRunner
    from itemsmith.cli.app import app
    heavy = json.loads(sys.argv[1])
    runner = CliRunner()
    report = []
    for args in json.loads(sys.argv[2]):
        result = runner.invoke(app, args)
        report.append({"args": args, "code": result.exit_code, "loaded": [m for m in heavy if m in sys.modules],
                       "output": result.output})
    print(json.dumps(report))
''')


def _probe(*command_lines: list[str]) -> list[dict]:
    """Each command line run in turn in one fresh interpreter, with the heavy modules loaded after it."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY), json.dumps(command_lines)],
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout)


def _every_command() -> list[list[str]]:
    paths: list[list[str]] = [[]]

    def walk(path: list[str], command: object) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            paths.append([*path, name])
            walk([*path, name], sub)

    walk([], typer.main.get_command(app))
    return paths


def test_help_of_every_command_imports_no_data_or_model_library() -> None:
    helps = [[*path, "--help"] for path in _every_command()]
    assert len(helps) > 30
    for outcome in _probe(*helps):
        assert outcome["code"] == 0, outcome
        assert outcome["loaded"] == [], f"{' '.join(outcome['args'])} imported {outcome['loaded']}"


WRONG = [["autor"], ["author", "--handler", "synthetic"], ["author", "--handler", "nosuch", "--task", "levels"],
         ["author", "--handler", "synthetic", "--task", "levels", "--templates", "0"],
         ["author", "--handler", "missing.py", "--task", "levels"], ["author", "--handler", "synthetic", "--task", "x"],
         ["author", "--handler", "synthetic", "--task", "levels", "--judge", "a:b", "--no-judges"],
         ["verify", "missing.py", "--handler", "synthetic"], ["sample", "-t", "x", "--text-format", "nope"],
         ["release", "evaluate", "b@1"], ["bank", "create"], ["keys", "revoke", "x"], ["db", "downgrade"],
         ["curated", "sample", "--out-file", "x.jsonl"], ["serve", "--port", "0"], ["worker", "--pool", "x"]]


def test_a_wrong_command_line_is_answered_before_any_data_or_model_library_is_imported() -> None:
    for outcome in _probe(*WRONG):
        assert outcome["code"] in (1, 2), outcome  # 2: the command line; 1: a value it names (a task too short)
        assert outcome["loaded"] == [], f"{' '.join(outcome['args'])} imported {outcome['loaded']}"


def test_the_bare_root_imports_no_command_module() -> None:
    (outcome,) = _probe(["--help"])
    assert all(name in outcome["output"] for name in COMMANDS)
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom itemsmith.cli.app import app\n"
                           "print([m for m in sys.modules if m.startswith('itemsmith.cli.') and m not in "
                           "('itemsmith.cli.app', 'itemsmith.cli._interrupt')])"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_root_listing_says_what_each_command_s_own_help_says(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    first_sentence = make_default_short_help(command.help or "", max_length=10_000)
    assert COMMANDS[name].summary == first_sentence, f"write {first_sentence!r} in cli.app.COMMANDS"


def test_version_is_the_installed_distributions_and_imports_nothing_heavy() -> None:
    from importlib.metadata import version

    (outcome,) = _probe(["--version"])
    assert outcome["code"] == 0, outcome
    assert outcome["output"].strip() == f"itemsmith {version('itemsmith')}"
    assert outcome["loaded"] == [], f"--version imported {outcome['loaded']}"


def test_version_falls_back_to_the_package_when_itemsmith_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    import itemsmith
    from itemsmith.cli.app import installed_version

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.setattr(itemsmith, "__version__", "9.9.9-tree")
    assert installed_version() == "9.9.9-tree"
