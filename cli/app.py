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
    itemsmith judges validate|list           which judge models may decide (cli.judges)
    itemsmith serve | worker                 the service (cli.server)
    itemsmith settings                       every environment variable (cli.settings)

Conventions (cli._common): ``--format`` is an output format, ``--text-format`` the series text
format; ``--out`` is a folder, ``--out-file`` one file; ``--json`` prints the result as JSON;
``--reasoning-budget`` on every command that calls models; exit code 1 when the operation fails,
2 for a wrong command line, 3 when model calls failed so that no verdict was reached (`verify`).
"""

from __future__ import annotations

from typing import Any

import typer
from typer._click.core import Context as ClickContext  # Typer's own Click: its groups take this
from typer.core import TyperGroup

from itemsmith.cli import bank, curated, db, handlers, judges, keys, release
from itemsmith.cli._common import fail
from itemsmith.cli.author import author
from itemsmith.cli.server import serve, worker
from itemsmith.cli.settings import settings
from itemsmith.cli.templates import check_template, sample
from itemsmith.cli.verify import verify
from itemsmith.layer_settings import InvalidSettings
from itemsmith.sandbox.layers import IsolationUnavailable

__all__ = ["app"]


class _Commands(TyperGroup):
    """The root group: a malformed or misspelt ``ITEMSMITH_*`` variable, or a sandbox that may not
    start with the layers this machine has (the operator set ITEMSMITH_SANDBOX_ALLOW_DEGRADED=false),
    is a failed operation with its reason, exit code 1, whichever command met it."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except (IsolationUnavailable, InvalidSettings) as exc:
            raise fail(str(exc)) from None


app = typer.Typer(cls=_Commands, help="Author, verify and export time-series reasoning benchmarks.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
app.add_typer(curated.app, name="curated")
app.add_typer(bank.app, name="bank")
app.add_typer(release.app, name="release")
app.command("author")(author)
app.command("sample")(sample)
app.command("check-template")(check_template)
app.command("verify")(verify)
app.add_typer(handlers.app, name="handlers")
app.add_typer(db.app, name="db")
app.add_typer(keys.app, name="keys")
app.add_typer(judges.app, name="judges")
app.command("serve")(serve)
app.command("worker")(worker)
app.command("settings")(settings)
