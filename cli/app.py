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
    itemsmith serve | worker                 the service (cli.server)
    itemsmith settings                       every environment variable (cli.settings)

Conventions (cli._common): ``--format`` is an output format, ``--text-format`` the series text
format; ``--out`` is a folder, ``--out-file`` one file; ``--json`` prints the result as JSON;
``--reasoning-budget`` on every command that calls models; exit code 1 when the operation fails,
2 for a wrong command line, 3 when model calls failed so that no verdict was reached (`verify`).
"""

from __future__ import annotations

import os

import typer

from itemsmith.cli import bank, curated, db, handlers, keys, release
from itemsmith.cli.author import author
from itemsmith.cli.server import serve, worker
from itemsmith.cli.settings import settings
from itemsmith.cli.templates import check_template, sample
from itemsmith.cli.verify import verify

__all__ = ["app"]

app = typer.Typer(help="Author, verify and export time-series reasoning benchmarks.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
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
app.command("serve")(serve)
app.command("worker")(worker)
app.command("settings")(settings)

SERVICE_COMMANDS = ("serve", "worker")


@app.callback()
def _sandbox_for_local_use(ctx: typer.Context) -> None:
    """Commands a local user runs may use a sandbox with fewer isolation layers (e.g. without root:
    no namespaces, no uid drop); the sandbox then says on stderr which are missing. The service
    commands never do (unless the operator sets ITEMSMITH_SANDBOX_ALLOW_DEGRADED)."""
    if ctx.invoked_subcommand not in SERVICE_COMMANDS and "ITEMSMITH_SANDBOX_ALLOW_DEGRADED" not in os.environ:
        os.environ["ITEMSMITH_SANDBOX_ALLOW_DEGRADED"] = "1"
        ctx.call_on_close(lambda: os.environ.pop("ITEMSMITH_SANDBOX_ALLOW_DEGRADED", None))  # in-process callers
