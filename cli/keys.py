"""`itemsmith keys create|list|revoke`: API keys of the service (stored as hashes; a key is shown once)."""

from __future__ import annotations

from typing import Annotated

import typer

from itemsmith.cli._common import DbOpt, JsonOpt, bank_session, fail, print_json, usage_error

__all__ = ["app"]

app = typer.Typer(help="API keys of the service (stored as hashes; a key is shown once).", no_args_is_help=True)


@app.command("create")
def keys_create(owner: Annotated[str, typer.Argument(help="Whose banks the key sees.")],
                name: Annotated[str, typer.Option("--name", help="A label, e.g. the person or machine.")] = "",
                db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Create an API key for OWNER and print it (it is not stored and cannot be shown again)."""
    from itemsmith.service.auth import create_key

    if not owner.strip():
        raise usage_error("an API key needs an owner")
    try:
        with bank_session(db) as session:
            key, record = create_key(session, owner, name)
    except ValueError as exc:
        raise fail(str(exc)) from None
    typer.echo(f"API key {record.id} for {record.owner!r} (store it now: it is not shown again):", err=True)
    if as_json:
        print_json({"key": key, **record.model_dump(mode="json")})
        return
    typer.echo(key)


@app.command("list")
def keys_list(owner: Annotated[str | None, typer.Option("--owner", help="Only this owner's keys.")] = None,
              db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List API keys (id, owner, name, prefix, created, revoked); never the keys themselves."""
    from itemsmith.service.auth import list_keys

    with bank_session(db) as session:
        keys = list_keys(session, owner)
    if as_json:
        print_json([key.model_dump(mode="json") for key in keys])
        return
    for key in keys:
        revoked = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
        typer.echo(f"{key.id:5} {key.owner:24} {key.name:20} {key.prefix}…  {key.created_at:%Y-%m-%d %H:%M}  {revoked}")


@app.command("revoke")
def keys_revoke(key_id: Annotated[int, typer.Argument(help="The key's id (see `keys list`).")],
                db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Revoke an API key: requests with it are refused from now on."""
    from itemsmith.service.auth import revoke_key
    from itemsmith.templates_bank.storage import NotFoundError

    try:
        with bank_session(db) as session:
            record = revoke_key(session, key_id)
    except NotFoundError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(record)
        return
    typer.echo(f"revoked API key {record.id} of {record.owner!r}")
