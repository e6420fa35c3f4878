"""`itemsmith bank list|show|create|import-curated|import-run|import-items`: the stored template banks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from itemsmith.cli._common import DbOpt, HandlerOpt, JsonOpt, bank_session, fail, local_sandbox, print_json, usage_error

if TYPE_CHECKING:
    from itemsmith.templates_bank.static_items import ImportProgress

__all__ = ["app"]

app = typer.Typer(help="Stored template banks: one per dataset and task, with every template version.",
                  no_args_is_help=True)

BankArg = Annotated[str, typer.Argument(help="Bank name.")]


@app.command("list")
def bank_list(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List the stored banks: name, handler, owner, task."""
    from itemsmith.templates_bank.storage import StorageError, list_banks

    try:
        with bank_session(db) as session:
            banks = list_banks(session)
    except StorageError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json([bank.model_dump(mode="json") for bank in banks])
        return
    for bank in banks:
        typer.echo(f"{bank.name:24} {bank.handler:16} {bank.owner:16} {bank.task}")


@app.command("show")
def bank_show(name: BankArg, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List a bank's template versions with their status (approved, rejected, accepted, declined, pending) and the
    handler each one runs on (curated templates keep their own)."""
    from itemsmith.templates_bank.storage import StorageError, get_bank, list_versions, version_statuses

    try:
        with bank_session(db) as session:
            bank = get_bank(session, name)
            statuses = version_statuses(session, bank.id)
            versions = list_versions(session, bank.id)
    except StorageError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json({"bank": bank.model_dump(mode="json"),
                    "versions": [{**v.model_dump(mode="json", exclude={"source"}), "status": statuses[v.id]}
                                 for v in versions]})
        return
    handlers = sorted({v.handler or bank.handler for v in versions})
    typer.echo(f"bank {bank.name} (handler {bank.handler}; its templates use {', '.join(handlers) or 'none yet'})")
    for version in versions:
        typer.echo(f"{version.template_key:40} {version.content_hash[:12]} {statuses[version.id]:9} "
                   f"{version.handler or bank.handler:14} {version.created_at:%Y-%m-%d} {version.created_by}")


@app.command("create")
def bank_create(
    name: Annotated[str, typer.Argument(help="Bank name (lowercase letters, digits, . _ -).")],
    handler: HandlerOpt,
    owner: Annotated[str, typer.Option("--owner", help="Who owns the bank.")],
    task: Annotated[str, typer.Option("--task", help="What the bank's benchmark tests.")] = "",
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a stored template bank (one per dataset and task)."""
    from pydantic import ValidationError

    from itemsmith.templates_bank.storage import BankCreate, StorageError, create_bank

    try:
        request = BankCreate(name=name, handler=handler, owner=owner, task=task)
    except ValidationError as exc:
        raise typer.BadParameter("; ".join(e["msg"] for e in exc.errors())) from None
    try:
        with bank_session(db) as session:
            bank = create_bank(session, request)
    except StorageError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(bank)
        return
    typer.echo(f"created bank {bank.name!r} (id {bank.id})")


@app.command("import-curated")
def bank_import_curated(
    name: Annotated[str, typer.Argument(help="Bank to import into.")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Recorded as the approving reviewer.")],
    template: Annotated[list[str] | None, typer.Option(
        "--template", "-t", help="Curated template (repeatable; default all).")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store curated templates in a bank as approved versions (idempotent)."""
    from itemsmith.templates_bank.curated import CuratedTemplateError
    from itemsmith.templates_bank.storage import StorageError, get_bank, import_curated

    try:
        with bank_session(db) as session:
            versions = import_curated(session, get_bank(session, name).id, reviewer=reviewer, template_ids=template)
    except (StorageError, CuratedTemplateError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json([{"id": v.id, "template_key": v.template_key, "content_hash": v.content_hash} for v in versions])
        return
    typer.echo(f"{len(versions)} curated templates in bank {name!r}")


@app.command("import-run")
def bank_import_run(
    run_dir: Annotated[Path, typer.Argument(help="The folder of one authoring run (OUT/RUN_ID, with report.json).",
                                            exists=True, file_okay=False)],
    bank: Annotated[str, typer.Option("--bank", help="Bank to store the run's accepted templates in.")],
    num_samples: Annotated[int | None, typer.Option(
        "--num-samples", min=1, max=100, help="Structure-check sample count for a report that does not record "
                                              "one (default: as the run did).")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help="Structure-check seed for a report that does not record one.")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store an authoring run's accepted templates with their verdicts in a bank, exactly as the author job
    does (idempotent: importing again stores nothing twice); calibrated when the run had a student pool."""
    from itemsmith.cli.author import cli_user, import_summary
    from itemsmith.sandbox import SandboxError
    from itemsmith.service.bank_import import RunImportError, import_run, load_run
    from itemsmith.templates_bank.storage import StorageError

    try:
        report = load_run(run_dir)
        with bank_session(db) as session:
            imported = import_run(session, report, bank, created_by=cli_user(), num_samples=num_samples, seed=seed,
                                  limits=local_sandbox())
    except (RunImportError, StorageError, SandboxError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(imported)
        return
    typer.echo(import_summary(imported))


_PROGRESS_EVERY_S = 5.0


def _progress_line() -> Callable[[ImportProgress], None]:
    """An import's progress on stderr, at most every `_PROGRESS_EVERY_S` seconds."""
    import time

    shown = [time.monotonic()]

    def show(state: ImportProgress) -> None:
        if time.monotonic() - shown[0] >= _PROGRESS_EVERY_S:
            shown[0] = time.monotonic()
            typer.echo(f"{state.phase}: {state.rows_parsed} rows read, {state.groups_stored} of {state.groups} "
                       "groups stored", err=True)

    return show


@app.command("import-items")
def bank_import_items(
    name: Annotated[str, typer.Argument(help="Bank to store the items in (created when missing).")],
    file: Annotated[str, typer.Argument(help="The benchmark file (tse, jsonl), or a local dataset (hf: a saved "
                                             "dataset folder or a .parquet/.json/.jsonl file, PATH[:split]).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="Input format: tse (TimeSeriesExam qa_dataset.json), jsonl or hf.")],
    mapping: Annotated[str | None, typer.Option(
        "--map", help="Columns of the fields, e.g. question=prompt,options=choices,answer=label,series=ts1+ts2,"
                      "group=template_id,category=task (jsonl, hf).")] = None,
    owner: Annotated[str, typer.Option("--owner", help="Who owns the bank (when it is created).")] = "local",
    task: Annotated[str, typer.Option("--task", help="What the benchmark tests (when the bank is created).")] = "",
    audit: Annotated[bool, typer.Option("--audit/--no-audit", help=(
        "Audit each group as it is stored (about half a second for a group of 60 items); --no-audit stores a "
        "large file quickly, to be audited as a release (itemsmith release audit)."))] = True,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store an existing benchmark's items as static groups (one version per template or group id), with the
    file's hash and an audit verdict per group; a bad row stores nothing (each bad row is listed with its
    column; exit 1). Idempotent. Progress goes to stderr every few seconds."""
    from itemsmith.cli.author import cli_user
    from itemsmith.templates_bank.static_items import ItemImportError, import_items, parse_mapping
    from itemsmith.templates_bank.static_items.formats import FORMATS
    from itemsmith.templates_bank.storage import StorageError

    if fmt not in FORMATS:
        raise usage_error(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    try:
        columns = parse_mapping(mapping)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if fmt != "hf" and not Path(file).is_file():
        raise usage_error(f"{file}: no such file")
    try:
        with bank_session(db) as session:
            report, _ = import_items(session, name, file, fmt, owner=owner, created_by=cli_user(), mapping=columns,
                                     task=task, audit=audit, on_progress=_progress_line())
    except (ItemImportError, StorageError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(report)
        return
    audited = (f"{len(report.groups_failing_audit)} groups fail the static audit" if report.audited
               else "not audited (--no-audit)")
    typer.echo(f"{report.rows} items in {report.groups} groups from {report.source} (sha256 {report.sha256[:12]}) "
               f"into bank {report.bank!r}: {report.new_versions} new versions, {report.unchanged_versions} "
               f"unchanged; {audited} ({report.elapsed_ms / 1000:.1f} s)")
    typer.echo(f"release it with `itemsmith release create {report.bank} --by ...`, then audit the release with "
               f"`itemsmith release audit {report.bank}@latest`")
