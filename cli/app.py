"""The `itemsmith` command line: the root command and its groups, one module each.

    itemsmith curated list|sample            the curated templates (cli.curated)
    itemsmith bank list|show|create|import-curated   stored banks (cli.bank)
    itemsmith release create|list|show|export|evaluate|reverify|calibrate   (cli.release)
    itemsmith author                         the authoring agents (cli.author)
    itemsmith sample | check-template        one template in the sandbox (cli.templates)
    itemsmith verify                         one template through author's stages (cli.verify)
    itemsmith handlers list                  dataset handlers (cli.handlers)
    itemsmith db upgrade|downgrade|current   the schema (cli.db)
    itemsmith keys create|list|revoke        API keys (cli.keys)
    itemsmith judges validate|validate-ladder|list   which judges and local ladders may decide (cli.judges)
    itemsmith serve | worker                 the service (cli.server)
    itemsmith settings                       every environment variable (cli.settings)
    itemsmith --version                      the installed version

Start-up: a command's module is imported only when that command is asked for (`COMMANDS`, by
"module:attribute"), and the command modules import their data and model libraries inside the
command functions; so ``itemsmith --help`` and a wrong command line are answered before pandas,
the model layer or the database are imported (`tests/cli/test_app.py` guards it). Help is plain
Click text: Typer's Rich help alone takes longer to import than Typer itself.

Conventions (cli._common): ``--format`` is an output format, ``--text-format`` the series text
format; ``--out`` is a folder, ``--out-file`` one file; ``--json`` prints the result as JSON;
``--reasoning-budget`` on every command that calls models; exit code 1 when the operation fails,
2 for a wrong command line, 3 when model calls failed so that no verdict was reached (`verify`).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
from typer._click.core import Command as ClickCommand  # Typer's own Click: its groups take these
from typer._click.core import Context as ClickContext
from typer._click.exceptions import ClickException
from typer._click.formatting import HelpFormatter
from typer.core import TyperGroup

from itemsmith.cli._interrupt import (
    INTERRUPTED,
    interrupted_message,
    new_command,
    stopped_promptly,
    without_finalizing,
)
from itemsmith.registry import LazyTarget, Registry

__all__ = ["COMMANDS", "app"]

MARKUP_MODE = None  # plain Click help (see the module's docstring)


@dataclass(frozen=True)
class CommandEntry:
    """A command of the root: a Typer group or a command function, imported when asked for, and the
    line ``itemsmith --help`` shows for it (the first sentence of the command's own help)."""

    target: LazyTarget
    summary: str


COMMANDS: Registry[CommandEntry] = Registry("command")
for _name, _target, _summary in (
    ("author", "itemsmith.cli.author:author", "Author item templates for a handler: plan, generate, check in the "
                                              "sandbox, audit the items, judge, test on students, refine."),
    ("verify", "itemsmith.cli.verify:verify", "Verify one template with the stages `author` runs (structure check, "
                                              "item audit, re-derivation, judges, students, capability filter), "
                                              "never refining it."),
    ("sample", "itemsmith.cli.templates:sample", "Sample items from a template (run in the sandbox) and print them."),
    ("check-template", "itemsmith.cli.templates:check_template",
     "Run the structure check on a template in the sandbox."),
    ("curated", "itemsmith.cli.curated:app", "The curated templates shipped with itemsmith."),
    ("bank", "itemsmith.cli.bank:app", "Stored template banks: one per dataset and task, with every template version."),
    ("release", "itemsmith.cli.release:app",
     "Releases: frozen, numbered bank states; export, verify, evaluate, re-verify, calibrate them."),
    ("handlers", "itemsmith.cli.handlers:app", "Dataset handlers."),
    ("db", "itemsmith.cli.db:app", "The database (SQLite file by default, PostgreSQL when configured)."),
    ("keys", "itemsmith.cli.keys:app", "API keys of the service (stored as hashes; a key is shown once)."),
    ("judges", "itemsmith.cli.judges:app", "Judge models and student ladders: measure how well each separates "
                                           "(good from flawed templates, strong from weak students); only a "
                                           "validated one decides."),
    ("serve", "itemsmith.cli.server:serve", "Run the REST API and review page (migrating the database first); jobs "
                                            "run in this process unless ITEMSMITH_API_JOB_RUNNER=celery."),
    ("worker", "itemsmith.cli.server:worker", "Run a Celery worker for jobs (broker ITEMSMITH_API_REDIS_URL)."),
    ("settings", "itemsmith.cli.settings:settings",
     "Every environment variable itemsmith reads, with its layer, default and meaning."),
):
    COMMANDS.add(_name, CommandEntry(LazyTarget(_target), _summary))


def load_command(name: str) -> ClickCommand:
    """The Click command of the root's command `name`, built from its module as ``app.add_typer`` /
    ``app.command`` would (with the root's help markup)."""
    target = COMMANDS.resolve(name).target.load()
    holder = typer.Typer(rich_markup_mode=MARKUP_MODE, add_completion=False)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_group(holder).commands[name]


class _LazyCommands(MutableMapping[str, ClickCommand]):
    """The root's commands by name; a command's module is imported on the first lookup of its name."""

    def __init__(self) -> None:
        self._loaded: dict[str, ClickCommand] = {}

    def __getitem__(self, name: str) -> ClickCommand:
        if name not in self._loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            self._loaded[name] = load_command(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: ClickCommand) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._loaded))


class _Commands(TyperGroup):
    """The root group: commands resolved lazily (`COMMANDS`), listed without importing them. A
    malformed or misspelt ``ITEMSMITH_*`` variable, or a sandbox that may not start with the layers
    this machine has (the operator set ITEMSMITH_SANDBOX_ALLOW_DEGRADED=false), is a failed
    operation with its reason, exit code 1, whichever command met it. Ctrl-C stops any command
    within about two seconds, exit code 130, with its resume hint (`cli._interrupt`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _LazyCommands()

    def list_commands(self, ctx: ClickContext) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.summary) for name, entry in COMMANDS.items()])

    def invoke(self, ctx: ClickContext) -> Any:
        new_command()
        try:
            return super().invoke(ctx)
        except (ClickException, typer.Exit, typer.Abort):  # a usage error, an exit code: as they are
            raise
        except KeyboardInterrupt:
            if (message := interrupted_message()) is not None:
                typer.secho(message, err=True, fg=typer.colors.RED)
            raise typer.Exit(code=INTERRUPTED) from None
        except Exception as exc:
            # imported here: the settings and the sandbox are not loaded to answer --help
            from itemsmith.cli._common import fail
            from itemsmith.layer_settings import InvalidSettings
            from itemsmith.sandbox.layers import IsolationUnavailable

            if isinstance(exc, IsolationUnavailable | InvalidSettings):
                raise fail(str(exc)) from None
            raise


class _Program(typer.Typer):
    """`itemsmith` as a program (the console script calls ``app()``): Ctrl-C is watched for the whole
    process, and an interrupted command exits at once (`cli._interrupt`). Tests drive the commands
    through Click, without either."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with stopped_promptly(), without_finalizing(INTERRUPTED):
            return super().__call__(*args, **kwargs)


app = _Program(cls=_Commands, help="Author, verify and export time-series reasoning benchmarks.",
                  no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=MARKUP_MODE)


def installed_version() -> str:
    """The version of the installed distribution (its metadata, as ``pip show itemsmith`` reports it), or
    the package's own ``__version__`` when itemsmith runs from a tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("itemsmith")
    except PackageNotFoundError:
        from itemsmith import __version__

        return __version__


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"itemsmith {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the installed version and exit."),
) -> None:
    """The root group itself does nothing; its commands are `COMMANDS`."""
