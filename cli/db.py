"""`itemsmith db upgrade|downgrade|current`: the schema of the database (bank and service tables,
and the jobs' checkpoint tables), one migration chain."""

from __future__ import annotations

from typing import Annotated

import typer

from itemsmith.cli._common import DbOpt, JsonOpt, print_json

__all__ = ["app"]

app = typer.Typer(help="The database (SQLite file by default, PostgreSQL when configured).", no_args_is_help=True)


def _where(db: str | None) -> str:
    from itemsmith.templates_bank.storage import normalize_url

    return normalize_url(db).render_as_string(hide_password=True)


def _report(db: str | None, as_json: bool) -> None:
    from itemsmith.templates_bank.storage import current_revision, head_revision

    revision = current_revision(db)
    if as_json:
        print_json({"database": _where(db), "revision": revision, "head": head_revision()})
        return
    typer.echo(f"{_where(db)}: at revision {revision}")


@app.command("upgrade")
def db_upgrade(db: DbOpt = None, revision: Annotated[str, typer.Option(help="Target revision.")] = "head",
               as_json: JsonOpt = False) -> None:
    """Create or migrate the bank's tables and the jobs' checkpoint tables (run once before first use
    and after upgrading itemsmith)."""
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.storage import normalize_url

    upgrade_database(normalize_url(db).render_as_string(hide_password=False), revision)
    _report(db, as_json)


@app.command("downgrade")
def db_downgrade(
    revision: Annotated[str, typer.Argument(help="Target revision ('base' drops every table).")],
    db: DbOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Migrate the database down to REVISION: the tables of newer revisions and their rows are dropped."""
    from itemsmith.templates_bank.storage import downgrade

    if not yes:
        typer.confirm(f"Downgrade {_where(db)} to {revision}? Tables of newer revisions are dropped with their "
                      "rows", abort=True, err=True)
    downgrade(db, revision)
    _report(db, as_json)


@app.command("current")
def db_current(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Print the database's migration revision."""
    from itemsmith.templates_bank.storage import current_revision, head_revision

    revision = current_revision(db)
    if as_json:
        print_json({"database": _where(db), "revision": revision, "head": head_revision()})
        return
    typer.echo(revision or "(empty: run `itemsmith db upgrade`)")
