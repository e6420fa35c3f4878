"""`itemsmith handlers list`: the built-in dataset handlers."""

from __future__ import annotations

from typing import Any

import typer

from itemsmith.cli._common import JsonOpt, print_json

__all__ = ["app"]

app = typer.Typer(help="Dataset handlers.", no_args_is_help=True)


@app.command("list")
def handlers_list(as_json: JsonOpt = False) -> None:
    """List the built-in dataset handlers and whether they load here."""
    from itemsmith.handlers import BUILTIN_HANDLERS, HandlerSourceError

    rows: list[dict[str, Any]] = []
    for name, entry in BUILTIN_HANDLERS.items():
        try:
            cls = entry.load_class()
        except HandlerSourceError as exc:
            rows.append({"name": name, "available": False, "description": "", "error": str(exc)})
            continue
        rows.append({"name": name, "available": True, "description": cls.description.strip(), "error": None})
    if as_json:
        print_json(rows)
        return
    for row in rows:
        if not row["available"]:
            typer.echo(f"{row['name']:15} (unavailable: {row['error']})")
            continue
        first_line = (row["description"].splitlines() or [""])[0]
        summary = first_line if len(first_line) <= 100 else first_line[:99] + "…"
        typer.echo(f"{row['name']:15} {summary}")
