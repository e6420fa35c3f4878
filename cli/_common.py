"""What the command groups share: options, errors and exit codes, JSON output, the bank session.

Exit codes: 0 done, 1 the operation failed (`fail`), 2 the command line is wrong (`usage_error`,
and Typer's own checks of options and arguments), 3 no verdict: model calls failed (missing data,
`NO_VERDICT`; run it again).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console
    from sqlalchemy.orm import Session

    from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
    from itemsmith.agents.settings import AgentSettings
    from itemsmith.sandbox import SandboxLimits
    from itemsmith.templates_bank.releases import Release
else:
    # Typer reads a command's annotations when it builds the command; an option parsed by
    # `model_spec` needs no more than a name there, so `agents.llm.spec` (pydantic) is imported only
    # when a spec is given, not to show --help or refuse a wrong command line.
    ModelSpec = object

__all__ = ["NO_VERDICT", "DbOpt", "ModelSpec", "HandlerOpt", "JsonOpt", "ReasoningBudgetOpt", "ReleaseArg", "SamplesOpt", "SeedOpt",
           "StudentOpt", "WorkersOpt", "agent_settings", "bank_session", "check_handler", "fail", "load_release",
           "local_sandbox", "migrate_if_known", "model_spec", "parse_students", "print_json", "progress_shown",
           "usage_error", "usage_line"]

NO_VERDICT = 3  # the exit code of a command whose model calls failed, so that it reached no verdict


def usage_error(message: str) -> typer.BadParameter:
    """Report a wrong command line (exit code 2, with the usage line); ``raise usage_error(...)``."""
    return typer.BadParameter(message)


def local_sandbox(**overrides: Any) -> SandboxLimits:
    """The sandbox limits of a command a local user runs: the settings (``ITEMSMITH_SANDBOX_*``) and
    `overrides`, allowed to run with fewer isolation layers (e.g. without root: no namespaces, no uid
    drop; the sandbox then says on stderr which are missing) unless the operator set
    ``ITEMSMITH_SANDBOX_ALLOW_DEGRADED``. The service commands (`serve`, `worker`) never use this."""
    from itemsmith.sandbox import SandboxSettings

    limits = SandboxSettings(sandbox=overrides).sandbox
    return limits if "allow_degraded" in limits.model_fields_set else limits.model_copy(update={"allow_degraded": True})


def check_handler(value: str) -> str:
    """A built-in handler's name or an existing handler file that parses, checked before any work
    starts (the file is compiled, never run here: it is loaded only in the sandbox)."""
    from itemsmith.handlers.registry import BUILTIN_HANDLERS

    if value.endswith(".py") or Path(value).is_file():
        if not Path(value).is_file():
            raise usage_error(f"handler file {value!r} does not exist")
        try:
            compile(Path(value).read_bytes(), value, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise fail(f"the handler file {value} does not parse: {exc.msg} (line {exc.lineno})") from None
        except (OSError, ValueError) as exc:  # unreadable; NUL bytes
            raise fail(f"the handler file {value} cannot be read as Python: {exc}") from None
        return value
    if value not in BUILTIN_HANDLERS:
        raise usage_error(f"{BUILTIN_HANDLERS.unknown_message(value)}, or a handler .py file")
    return value


def model_spec(value: str) -> ModelSpec:
    """A model spec option (``parser=model_spec``), parsed where it enters (`agents.llm.spec`), whose provider
    and what it names (a local model, an endpoint, a script file) exist, checked before any work
    starts; a missing key or an uninstalled model is found later, as a failed operation."""
    from pydantic import TypeAdapter, ValidationError

    from itemsmith.agents.llm.spec import ModelSpecField

    try:
        spec = TypeAdapter(ModelSpecField).validate_python(value)
    except ValidationError as exc:
        raise usage_error(exc.errors()[0]["msg"]) from None
    return _operator_may_name(spec)


def _operator_may_name(spec: ModelSpec) -> ModelSpec:
    from itemsmith.agents.errors import ProviderConfigError, SettingsError
    from itemsmith.agents.llm.providers import SpecPolicy, check_spec

    try:
        return check_spec(spec, SpecPolicy.operator())
    except ProviderConfigError as exc:
        raise usage_error(str(exc)) from None
    except SettingsError as exc:  # the machine's configuration, not the command line
        raise fail(str(exc)) from None


SamplesOpt = Annotated[int, typer.Option("-n", "--samples", min=1, max=1000, help="Items to sample.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the run; same seed, same items.")]
DbOpt = Annotated[str | None, typer.Option(
    "--db", help="Database URL (default: ITEMSMITH_DATABASE_URL, else ITEMSMITH_DATA_DIR/itemsmith.sqlite).")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=64, help="Sandbox workers regenerating items.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (one object or array).")]
HandlerOpt = Annotated[str, typer.Option("--handler", help="Built-in handler name or a handler .py file.",
                                         callback=check_handler)]

ReleaseArg = Annotated[str, typer.Argument(help="BANK@NUMBER or BANK@latest.")]
StudentOpt = Annotated[list[str] | None, typer.Option(
    "--student", help="Student as SPEC@RANK, larger rank = more capable (repeat for a pool); local models "
                      "answer by letter log-likelihood. None: no student pool.")]
ReasoningBudgetOpt = Annotated[list[str] | None, typer.Option(
    "--reasoning-budget", help="ROLE=TOKENS (repeatable): hidden reasoning tokens a reasoning model (gpt-5, "
                               "o-series) may spend on top of the role's reply budget. Roles: planner, generator, "
                               "judge, student (also the model under test of release evaluate), solver "
                               "(re-derivation). Default: ITEMSMITH_REASONING_BUDGET_TOKENS.")]


def agent_settings(reasoning_budget: list[str] | None = None) -> AgentSettings:
    """The agents' settings with ``--reasoning-budget ROLE=TOKENS`` applied over
    ``ITEMSMITH_REASONING_BUDGET_TOKENS`` (a malformed value or an unknown role: a usage error; a
    malformed variable: a failed operation that names it)."""
    from pydantic import TypeAdapter, ValidationError

    from itemsmith.agents.errors import SettingsError
    from itemsmith.agents.settings import REASONING_ROLES, ReasoningTokens, get_settings

    budgets = {}
    for value in reasoning_budget or []:
        role, sep, tokens = (part.strip() for part in value.partition("="))
        if not sep or not tokens.isdigit():
            raise usage_error(f"--reasoning-budget {value!r} is not ROLE=TOKENS (e.g. judge=8000)")
        if role not in REASONING_ROLES:
            raise usage_error(f"--reasoning-budget {value!r}: unknown role {role!r} (roles: "
                              f"{', '.join(REASONING_ROLES)})")
        try:
            budgets[role] = TypeAdapter(ReasoningTokens).validate_python(int(tokens))
        except ValidationError as exc:
            raise usage_error(f"--reasoning-budget {value!r}: {exc.errors()[0]['msg']}") from None
    try:
        settings = get_settings()
    except SettingsError as exc:  # a malformed ITEMSMITH_* variable: the operation cannot start
        raise fail(str(exc)) from None
    if not budgets:
        return settings
    return settings.model_copy(update={"reasoning_budget_tokens": {**settings.reasoning_budget_tokens, **budgets}})


def fail(message: str) -> typer.Exit:
    """Report a failed operation (exit code 1); ``raise fail(...)``. The message is made
    terminal-safe: it often quotes template output."""
    from itemsmith.items.rendering import terminal_safe

    typer.secho(f"error: {terminal_safe(message)}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=1)


def print_json(payload: BaseModel | dict[str, Any] | list[Any]) -> None:
    """One JSON document on stdout."""
    from pydantic import BaseModel

    if isinstance(payload, BaseModel):
        sys.stdout.write(payload.model_dump_json() + "\n")
        return
    sys.stdout.write(json.dumps(payload, default=str) + "\n")


def migrate_if_known(db: str | None) -> None:
    """Migrate an empty database, or one an older itemsmith migrated, to this itemsmith's schema (as
    `itemsmith serve` does, saying so on stderr); exit 1 on a database at a revision this itemsmith
    does not know (a newer itemsmith's: migrating it down would drop its newer tables)."""
    from itemsmith.templates_bank.storage import current_revision, head_revision, is_known_revision, normalize_url

    url = normalize_url(db)
    current, head = current_revision(url), head_revision()
    if current == head:
        return
    where = url.render_as_string(hide_password=True)
    if current is not None and not is_known_revision(current):
        raise fail(f"the bank database {where} is at revision {current}, which this itemsmith does not know (it "
                   f"needs {head}): a newer itemsmith migrated it; upgrade itemsmith")
    from itemsmith.service.jobs import upgrade_database  # the jobs' checkpoint tables too: only when migrating

    upgrade_database(url.render_as_string(hide_password=False))
    typer.echo(f"migrated the bank database {where} from revision {current or '(empty)'} to {head}", err=True)


@contextmanager
def bank_session(db: str | None) -> Iterator[Session]:
    """A session on a bank database at this itemsmith's schema (`migrate_if_known`)."""
    from itemsmith.templates_bank.storage import open_session

    migrate_if_known(db)
    with open_session(db) as session:
        yield session


def load_release(ref: str, db: str | None) -> Release:
    """The release BANK@NUMBER / BANK@latest: a malformed reference is a usage error, a missing one a failure."""
    from itemsmith.templates_bank.releases import ReleaseError, get_release, parse_release_ref
    from itemsmith.templates_bank.storage import StorageError

    try:
        bank, number = parse_release_ref(ref)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    try:
        with bank_session(db) as session:
            return get_release(session, bank, number)
    except (StorageError, ReleaseError) as exc:
        raise fail(str(exc)) from None


@contextmanager
def progress_shown(what: str, *, enabled: bool = True,
                   console: Console | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """``on_progress(done, total)`` for the work done inside the block; None when not `enabled` (``--json``).

    On a terminal it is a rich.progress bar (count, time spent, time left) on stderr; in a log or a
    pipe, where a bar would redraw nothing, a line "what: done/total" about every tenth of the way
    and at the end (written without importing rich when no `console` is given)."""
    if not enabled:
        yield None
        return
    if console is None and not sys.stderr.isatty():
        yield _progress_lines(what, lambda line: typer.echo(line, err=True))
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    shown_on = console or Console(stderr=True)
    if not shown_on.is_terminal:
        yield _progress_lines(what, lambda line: shown_on.print(line, markup=False, highlight=False, soft_wrap=True))
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=shown_on) as bar:  # what the command prints meanwhile goes above the bar
        task = bar.add_task(what, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _progress_lines(what: str, write: Callable[[str], None]) -> Callable[[int, int], None]:
    shown = [-1]

    def progress(done: int, total: int) -> None:
        step = max(1, total // 10)
        if done == total or done // step != shown[0] // step:
            shown[0] = done
            write(f"{what}: {done}/{total}")

    return progress


def parse_students(specs: list[str] | None) -> list[StudentSpec]:
    """``--student SPEC@RANK`` (the one rule of `agents.llm.spec.StudentSpec`), each spec checked."""
    from pydantic import ValidationError

    from itemsmith.agents.llm.spec import StudentSpec

    parsed = []
    for text in specs or []:
        try:
            student = StudentSpec.model_validate(text)
        except ValidationError:
            raise usage_error(f"--student {text!r}: write SPEC@RANK, e.g. openai:gpt-4o-mini@1 "
                              "(larger rank: more capable)") from None
        _operator_may_name(student.spec)
        parsed.append(student)
    return parsed


def usage_line(usage: Mapping[str, float | int | None]) -> str:
    """Calls by outcome, tokens (cached apart) and cost, as one line."""
    if not usage:
        return "not metered"
    cost = usage.get("cost_usd")
    return (f"{usage.get('answered_calls', 0)} answered, {usage.get('cut_calls', 0)} cut, "
            f"{usage.get('failed_calls', 0)} failed; {usage.get('input_tokens', 0)} input tokens "
            f"({usage.get('cached_input_tokens', 0)} cached, {usage.get('cache_write_tokens', 0)} written to the "
            f"cache), {usage.get('output_tokens', 0)} output; "
            + ("cost unknown" if cost is None else f"${float(cost):.4f}"))
