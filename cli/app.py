"""The `itemsmith` command line."""

from __future__ import annotations

import json
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from itemsmith.handlers import BUILTIN_HANDLERS, HandlerSourceError
from itemsmith.templates_bank.curated import CuratedTemplateError, get_curated, load_curated
from itemsmith.templates_bank.items.rendering import TextFormat, render_item
from itemsmith.templates_bank.items.schema import Item, RunStatus

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from itemsmith.templates_bank.releases import Release

app = typer.Typer(help="Author, verify and export time-series reasoning benchmarks.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
handlers_app = typer.Typer(help="Dataset handlers.", no_args_is_help=True)
bank_app = typer.Typer(help="The curated templates and the stored template banks.", no_args_is_help=True)
db_app = typer.Typer(help="The bank database (SQLite file by default, PostgreSQL when configured).",
                     no_args_is_help=True)
release_app = typer.Typer(help="Releases: frozen, numbered bank states.", no_args_is_help=True)
app.add_typer(handlers_app, name="handlers")
app.add_typer(bank_app, name="bank")
app.add_typer(db_app, name="db")
app.add_typer(release_app, name="release")

SamplesOpt = Annotated[int, typer.Option("-n", "--samples", min=1, max=1000, help="Items to sample.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the run; same seed, same items.")]
DbOpt = Annotated[str | None, typer.Option(
    "--db", help="Database URL (default: ITEMSMITH_DATABASE_URL, else ITEMSMITH_DATA_DIR/itemsmith.sqlite).")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=64, help="Sandbox workers regenerating items.")]


def _fail(message: str) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)


@handlers_app.command("list")
def handlers_list() -> None:
    """List the built-in dataset handlers and whether they load here."""
    for name, entry in BUILTIN_HANDLERS.items():
        try:
            cls = entry.load_class()
        except HandlerSourceError as exc:
            typer.echo(f"{name:15} (unavailable: {exc})")
            continue
        first_line = (cls.description.strip().splitlines() or [""])[0]
        summary = first_line if len(first_line) <= 100 else first_line[:99] + "…"
        typer.echo(f"{name:15} {summary}")


def _template_source(template: str, handler: str | None) -> tuple[str, str]:
    """(source, handler) for a curated template name or a template file."""
    path = Path(template)
    if template.endswith(".py") or path.is_file():
        if not path.is_file():
            raise _fail(f"template file {template!r} does not exist")
        if handler is None:
            raise _fail("a template file needs --handler NAME_OR_PATH")
        return path.read_text(), handler
    try:
        curated = get_curated(template)
    except CuratedTemplateError as exc:
        raise _fail(str(exc)) from None
    return curated.source, handler or curated.handler or "synthetic"


@app.command()
def sample(
    template: Annotated[str, typer.Option("--template", "-t", help="Curated template name or a template .py file.")],
    handler: Annotated[str | None, typer.Option("--handler", help="Built-in handler name or a handler .py file.")] = None,
    samples: SamplesOpt = 5,
    fmt: Annotated[TextFormat, typer.Option("--format", help="Text format of the series.")] = TextFormat.plain,
    decimals: Annotated[int, typer.Option(min=0, max=10)] = 2,
    seed: SeedOpt = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print items as JSON lines.")] = False,
) -> None:
    """Sample items from a template (run in the sandbox) and print them."""
    from itemsmith.sandbox import run_template

    source, handler_spec = _template_source(template, handler)
    result = run_template(source, handler_spec, num_samples=samples, seed=seed)
    if result.status is not RunStatus.ok:
        raise _fail(f"template {result.status.value}: {result.error}")
    for number, raw in enumerate(result.items, 1):
        item = Item.model_validate(raw)
        if as_json:
            typer.echo(item.model_dump_json())
            continue
        typer.secho(f"--- item {number} ---", bold=True)
        typer.echo(render_item(item, fmt=fmt, decimals=decimals))
        typer.echo(f"Answer: {item.answer_letter}) {item.answer}")
        if item.rationale:
            typer.echo(f"Why: {item.rationale}")


@app.command("check-template")
def check_template(
    template_file: Annotated[Path, typer.Argument(help="The template .py file.")],
    handler: Annotated[str, typer.Option("--handler", help="Built-in handler name or a handler .py file.")],
    samples: SamplesOpt = 5,
    seed: SeedOpt = 0,
    wall_s: Annotated[float | None, typer.Option(help="Wall-clock limit per run, seconds.")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Address-space limit per run, MiB.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON object.")] = False,
) -> None:
    """Run the structure check on a template in the sandbox. Exit code 0 only when it is ok."""
    from itemsmith.sandbox import SandboxLimits
    from itemsmith.verification.structure import check_structure

    if not template_file.is_file():
        raise _fail(f"template file {str(template_file)!r} does not exist")
    overrides = {k: v for k, v in {"wall_s": wall_s, "memory_mb": memory_mb}.items() if v is not None}
    report = check_structure(template_file.read_text(), handler, num_samples=samples, seed=seed,
                             limits=SandboxLimits(**overrides))
    payload = {
        "status": report.status.value,
        "items": [item.model_dump(mode="json") for item in report.items],
        "error": report.error,
        "elapsed_ms": round(report.elapsed_ms, 1),
    }
    if as_json:
        sys.stdout.write(json.dumps(payload) + "\n")
    else:
        typer.echo(f"{report.status.value}: {len(report.items)} items in {payload['elapsed_ms']} ms")
        if report.error:
            typer.echo(report.error)
    raise typer.Exit(code=0 if report.passed else 1)


@bank_app.command("list")
def bank_list() -> None:
    """List the curated templates."""
    for template in load_curated().values():
        tags = ",".join(template.concepts)
        typer.echo(f"{template.id:40} {template.category:22} {template.handler:10} {tags:28} {template.title}")


@bank_app.command("sample")
def bank_sample(
    out: Annotated[Path, typer.Option("--out", help="JSONL file to write, one item a line.")],
    every: Annotated[bool, typer.Option("--all", help="Sample every curated template.")] = False,
    template: Annotated[list[str] | None, typer.Option("--template", "-t", help="Curated template (repeatable).")] = None,
    samples: SamplesOpt = 5,
    seed: SeedOpt = 0,
) -> None:
    """Sample items from curated templates (in the sandbox) into a JSONL file."""
    from itemsmith.sandbox import run_template

    if every == bool(template):
        raise _fail("give either --all or one or more --template NAME")
    try:
        chosen = list(load_curated().values()) if every else [get_curated(name) for name in template or []]
    except CuratedTemplateError as exc:
        raise _fail(str(exc)) from None
    failures = 0
    with out.open("w") as sink:
        for curated in chosen:
            result = run_template(curated.source, curated.handler or "synthetic", num_samples=samples, seed=seed)
            if result.status is not RunStatus.ok:
                failures += 1
                typer.secho(f"{curated.id}: {result.status.value}: {result.error}", err=True, fg=typer.colors.RED)
                continue
            for raw in result.items:
                item = Item.model_validate(raw)
                row = {"template_id": curated.id, "category": curated.category, "concepts": curated.concepts,
                       "handler": curated.handler, **item.model_dump(mode="json")}
                sink.write(json.dumps(row) + "\n")
    typer.echo(f"wrote {len(chosen) - failures} templates x {samples} items to {out}")
    if failures:
        raise _fail(f"{failures} template(s) failed")


@app.command()
def author(
    handler: Annotated[str, typer.Option("--handler", help="Built-in handler name or a handler .py file.")],
    task: Annotated[str, typer.Option("--task", help="What the benchmark should test, in plain words.")],
    templates: Annotated[int, typer.Option("--templates", "-N", min=1, max=1000, help="Template slots to fill.")] = 5,
    generator: Annotated[str | None, typer.Option(
        "--generator", help="Model spec, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
                            "openai_compatible:NAME@URL, local:qwen2.5-coder-1.5b. Default: a hosted model when "
                            "its API key is set, else the local model.")] = None,
    planner: Annotated[str | None, typer.Option("--planner", help="Model spec of the planner (default: the generator).")] = None,
    rounds: Annotated[int, typer.Option("--rounds", min=1, max=20, help="Generate/refine rounds per slot.")] = 3,
    slots: Annotated[int, typer.Option("--slots", min=1, max=256, help="Slots authored concurrently.")] = 4,
    sandbox_workers: Annotated[int, typer.Option("--sandbox-workers", min=1, max=64)] = 2,
    out: Annotated[Path, typer.Option("--out", help="Output folder (a run writes OUT/RUN_ID/).")] = Path("out"),
    checkpoint: Annotated[str | None, typer.Option(
        "--checkpoint", help="SQLite file or postgresql:// URL (default OUT/checkpoints.sqlite).")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Resume this run (or name a new one).")] = None,
    seed: SeedOpt = 0,
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", help="Judge model spec (repeat for a panel); none: no judge panel.")] = None,
    student: Annotated[list[str] | None, typer.Option(
        "--student", help="Student as SPEC@RANK, larger rank = more capable (repeat for a pool); local models "
                          "answer by letter log-likelihood. None: no student pool.")] = None,
    no_live: Annotated[bool, typer.Option("--no-live", help="Plain log lines instead of a live table.")] = False,
) -> None:
    """Author item templates for a handler: plan, generate, check in the sandbox, judge, test on students,
    refine. Resumable."""
    import asyncio

    from pydantic import ValidationError

    from itemsmith.agents.errors import AgentError
    from itemsmith.agents.progress import ProgressTable
    from itemsmith.sandbox import SandboxError
    from itemsmith.agents.run import AuthorConfig, new_run_id
    from itemsmith.agents.run import author as run_author

    run_id = run_id or new_run_id()
    try:
        config = AuthorConfig(handler=handler, task=task, templates=templates, generator=generator, planner=planner,
                              max_rounds=rounds, slots=slots, sandbox_workers=sandbox_workers, out_dir=out,
                              checkpoint=checkpoint, run_id=run_id, seed=seed, judges=judge or [],
                              students=student or [])
    except ValidationError as exc:
        raise _fail("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    typer.echo(f"run {run_id} (if it stops, resume with --run-id {run_id})", err=True)
    try:
        with ProgressTable(max_rounds=rounds, live=not no_live and sys.stderr.isatty()) as progress:
            report = asyncio.run(run_author(config, on_event=progress))
    except (AgentError, HandlerSourceError, SandboxError) as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(f"interrupted; finished templates are kept: resume with --run-id {run_id}") from None
    summary = report.summary()
    typer.echo(json.dumps(summary, indent=1))
    typer.echo(f"accepted templates and report: {out / report.run_id}/ (resume with --run-id {report.run_id})")
    if not report.accepted:
        raise typer.Exit(code=1)


# --- stored banks, releases, exports ---------------------------------------------------------


def _session(db: str | None) -> AbstractContextManager[Session]:
    """A session on a bank database migrated to this itemsmith's schema."""
    from itemsmith.templates_bank.storage import StorageError, open_session, require_current_schema

    try:
        require_current_schema(db)
    except StorageError as exc:
        raise _fail(str(exc)) from None
    return open_session(db)


@db_app.command("upgrade")
def db_upgrade(db: DbOpt = None, revision: Annotated[str, typer.Option(help="Target revision.")] = "head") -> None:
    """Create or migrate the bank's tables (run once before first use and after upgrading itemsmith)."""
    from itemsmith.templates_bank.storage import current_revision, normalize_url, upgrade

    upgrade(db, revision)
    typer.echo(f"{normalize_url(db).render_as_string(hide_password=True)}: at revision {current_revision(db)}")


@db_app.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision ('base' drops every bank table).")],
                 db: DbOpt = None) -> None:
    """Migrate the bank's tables down to REVISION."""
    from itemsmith.templates_bank.storage import current_revision, downgrade

    downgrade(db, revision)
    typer.echo(f"at revision {current_revision(db)}")


@db_app.command("current")
def db_current(db: DbOpt = None) -> None:
    """Print the database's migration revision."""
    from itemsmith.templates_bank.storage import current_revision

    typer.echo(current_revision(db) or "(empty: run `itemsmith db upgrade`)")


@bank_app.command("create")
def bank_create(
    name: Annotated[str, typer.Argument(help="Bank name (lowercase letters, digits, . _ -).")],
    handler: Annotated[str, typer.Option("--handler", help="Built-in handler name or a handler .py file.")],
    owner: Annotated[str, typer.Option("--owner", help="Who owns the bank.")],
    task: Annotated[str, typer.Option("--task", help="What the bank's benchmark tests.")] = "",
    db: DbOpt = None,
) -> None:
    """Create a stored template bank (one per dataset and task)."""
    from pydantic import ValidationError

    from itemsmith.templates_bank.storage import BankCreate, StorageError, create_bank

    try:
        with _session(db) as session:
            bank = create_bank(session, BankCreate(name=name, handler=handler, owner=owner, task=task))
    except (StorageError, ValidationError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"created bank {bank.name!r} (id {bank.id})")


@bank_app.command("import-curated")
def bank_import_curated(
    name: Annotated[str, typer.Argument(help="Bank to import into.")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Recorded as the approving reviewer.")],
    template: Annotated[list[str] | None, typer.Option(
        "--template", "-t", help="Curated template (repeatable; default all).")] = None,
    db: DbOpt = None,
) -> None:
    """Store curated templates in a bank as approved versions (idempotent)."""
    from itemsmith.templates_bank.storage import StorageError, get_bank, import_curated

    try:
        with _session(db) as session:
            versions = import_curated(session, get_bank(session, name).id, reviewer=reviewer, template_ids=template)
    except (StorageError, CuratedTemplateError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"{len(versions)} curated templates in bank {name!r}")


@bank_app.command("status")
def bank_status(name: Annotated[str | None, typer.Argument(help="Bank (default: list the banks).")] = None,
                db: DbOpt = None) -> None:
    """List the stored banks, or one bank's template versions with their status."""
    from itemsmith.templates_bank.storage import StorageError, get_bank, list_banks, list_versions, version_statuses

    try:
        with _session(db) as session:
            if name is None:
                for bank in list_banks(session):
                    typer.echo(f"{bank.name:24} {bank.handler:16} {bank.owner:16} {bank.task}")
                return
            bank = get_bank(session, name)
            statuses = version_statuses(session, bank.id)
            for version in list_versions(session, bank.id):
                typer.echo(f"{version.template_key:40} {version.content_hash[:12]} {statuses[version.id]:9} "
                           f"{version.created_at:%Y-%m-%d} {version.created_by}")
    except StorageError as exc:
        raise _fail(str(exc)) from None


@release_app.command("create")
def release_create(
    bank: Annotated[str, typer.Argument(help="Bank to freeze.")],
    by: Annotated[str, typer.Option("--by", help="Who creates the release.")],
    seeds: Annotated[int, typer.Option(
        "--seeds", min=1, max=100_000, help="Seeds per template: 0..N-1 (+ --first-seed).")] = 1,
    first_seed: Annotated[int, typer.Option("--first-seed", min=0, help="First seed.")] = 0,
    samples: Annotated[int, typer.Option("-n", "--samples", min=1, max=1000, help="Items per template and seed.")] = 5,
    template: Annotated[list[str] | None, typer.Option(
        "--template", "-t", help="Template id (repeatable; default all releasable).")] = None,
    note: Annotated[str, typer.Option("--note", help="Release note.")] = "",
    workers: WorkersOpt = 1,
    db: DbOpt = None,
) -> None:
    """Freeze a bank's approved/accepted templates into its next numbered release."""
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseCreate, ReleaseError, create_release
    from itemsmith.templates_bank.storage import StorageError

    request = ReleaseCreate(bank=bank, seeds=list(range(first_seed, first_seed + seeds)), num_samples=samples,
                            template_ids=template, created_by=by, note=note)
    try:
        with _session(db) as session:
            manifest = create_release(session, request, workers=workers).manifest
    except (StorageError, ReleaseError, RegenerationError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"released {manifest.ref}: {manifest.counts.templates} templates, {manifest.counts.items} items, "
               f"checksum {manifest.checksum}")


@release_app.command("list")
def release_list(bank: Annotated[str, typer.Argument(help="Bank.")], db: DbOpt = None) -> None:
    """List a bank's releases."""
    from itemsmith.templates_bank.releases import list_releases
    from itemsmith.templates_bank.storage import StorageError

    try:
        with _session(db) as session:
            manifests = list_releases(session, bank)
    except StorageError as exc:
        raise _fail(str(exc)) from None
    for m in manifests:
        typer.echo(f"{m.ref:24} {m.created_at:%Y-%m-%d %H:%M} {m.created_by:16} {m.counts.templates:5} templates "
                   f"{m.counts.items:8} items  {m.checksum[:12]}  {m.note}")


def _load_release(ref: str, db: str | None) -> Release:
    from itemsmith.templates_bank.releases import ReleaseError, get_release, parse_release_ref
    from itemsmith.templates_bank.storage import StorageError

    try:
        bank, number = parse_release_ref(ref)
        with _session(db) as session:
            return get_release(session, bank, number)
    except (ValueError, StorageError, ReleaseError) as exc:
        raise _fail(str(exc)) from None


@release_app.command("show")
def release_show(release: Annotated[str, typer.Argument(help="BANK@NUMBER or BANK@latest.")], db: DbOpt = None) -> None:
    """Print a release's manifest (JSON)."""
    typer.echo(_load_release(release, db).manifest.model_dump_json(indent=2))


@app.command("export")
def export(
    release: Annotated[str, typer.Argument(help="BANK@NUMBER or BANK@latest.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl, hf, lm-eval or inspect.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (must not exist unless --force).")],
    text_format: Annotated[TextFormat, typer.Option(
        "--text-format", help="Series format in prompts.")] = TextFormat.plain,
    decimals: Annotated[int, typer.Option(min=0, max=10, help="Series decimals in prompts.")] = 2,
    plots: Annotated[bool, typer.Option("--plots", help="Also write PNG plots (jsonl, hf).")] = False,
    license_: Annotated[str, typer.Option("--license", help="License in the dataset card (hf).")] = "other",
    force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
) -> None:
    """Export a release: items regenerated in the sandbox, checked against the manifest, streamed to files."""
    from itemsmith.templates_bank.exporters import ExportError, ExportOptions, export_release
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError

    frozen = _load_release(release, db)
    options = ExportOptions(text_format=text_format, decimals=decimals, plots=plots, license=license_)
    try:
        report = export_release(frozen, fmt, out, options, workers=workers, overwrite=force)
    except (ExportError, ReleaseError, RegenerationError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"exported {frozen.manifest.ref} as {fmt}: {report.rows} items in {out}")


# --- evaluation of a model on a release --------------------------------------------------------


@app.command("evaluate")
def evaluate(
    release: Annotated[str, typer.Argument(help="BANK@NUMBER or BANK@latest.")],
    model: Annotated[str, typer.Option(
        "--model", "-m", help="Model under test: openai:gpt-4o, anthropic:..., openai_compatible:NAME@URL, "
                              "local:qwen2.5-coder-1.5b, scripted:FILE.")],
    formats: Annotated[list[TextFormat] | None, typer.Option(
        "--format", help="Text format of the series (repeatable: items are answered in each; default plain).")] = None,
    decimals: Annotated[int, typer.Option(min=0, max=10, help="Series decimals in prompts.")] = 2,
    fresh_seed: Annotated[bool, typer.Option(
        "--fresh-seed", help="New instances of the same templates, on seeds the release never used.")] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help="With --fresh-seed: the seed the new seeds are drawn from (default random; "
                              "recorded in the report).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=256, help="Model calls in flight.")] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as one JSON object.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the whole report (JSON) here.")] = None,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
) -> None:
    """Evaluate a model on a release: accuracy overall, per category, dataset, text format, series
    length and queried position, and its IRT ability."""
    import secrets

    from langchain_core.language_models import BaseChatModel

    from itemsmith.agents.errors import AgentError
    from itemsmith.agents.providers import ModelSpec, make_model
    from itemsmith.agents.settings import get_settings
    from itemsmith.agents.verification_stages import make_letter_scorer
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError
    from itemsmith.templates_bank.evaluation import evaluate_release, report_table
    from itemsmith.verification.students import LetterScorer, Student, StudentConfig

    if seed is not None and not fresh_seed:
        raise _fail("--seed only applies with --fresh-seed")
    if out is not None and out.is_dir():
        raise _fail(f"--out {str(out)!r} is a folder; give a file name")
    frozen = _load_release(release, db)
    # a local model answers by letter log-likelihood (one forward pass, nothing left unparsed), others in chat
    answerer: BaseChatModel | LetterScorer
    try:
        if ModelSpec.parse(model).provider == "local":
            answerer, limit = make_letter_scorer(model, get_settings()), 1
        else:
            handle = make_model(model)
            answerer, limit = handle.model, min(concurrency, handle.max_concurrency or concurrency)
    except AgentError as exc:
        raise _fail(str(exc)) from None
    student = Student(StudentConfig(name=model, rank=0, model=model, decimals=decimals), answerer)
    drawn = (seed if seed is not None else secrets.randbits(31)) if fresh_seed else None
    try:
        report = evaluate_release(frozen, student, formats=formats or [TextFormat.plain], fresh_seed=drawn,
                                  max_concurrency=limit, workers=workers)
    except (ReleaseError, RegenerationError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if out is not None:
        out.write_text(report.model_dump_json(indent=1) + "\n")
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
    else:
        typer.echo(report_table(report))
        if out is not None:
            typer.echo(f"\nfull report with every response: {out}")


# --- re-verification of a release with a new judge panel ---------------------------------------


def _reverify_students(specs: list[str]) -> list[tuple[str, int]]:
    """``SPEC@RANK`` -> (spec, rank); the rank follows the last ``@`` (a spec may hold one)."""
    parsed = []
    for text in specs:
        spec, at, rank = text.rpartition("@")
        if not at or not spec or not rank.lstrip("-").isdigit():
            raise _fail(f"--students {text!r}: write SPEC@RANK, e.g. openai:gpt-4o-mini@1 (larger rank: more capable)")
        parsed.append((spec, int(rank)))
    return parsed


@app.command("reverify")
def reverify(
    release: Annotated[str, typer.Argument(help="BANK@NUMBER or BANK@latest.")],
    judge: Annotated[list[str], typer.Option(
        "--judge", help="Judge model spec of the new panel (repeatable), e.g. openai:gpt-4o, scripted:FILE.")],
    students: Annotated[list[str] | None, typer.Option(
        "--students", help="Student model spec with its capability rank, SPEC@RANK (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as one JSON object.")] = False,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
) -> None:
    """Judge a release again with a new panel: the new verdicts are stored beside the old ones (answers
    already in the bank for the same model, prompt and item are reused, not asked again), and the
    difference is printed. A template the new panel rejects is declined for the next release unless a
    person approved it."""
    from sqlalchemy.orm import Session

    from itemsmith.agents.errors import AgentError
    from itemsmith.agents.providers import make_model
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError
    from itemsmith.templates_bank.storage import StorageError, get_engine
    from itemsmith.verification.judges import Judge, JudgeConfig
    from itemsmith.templates_bank.reverification import reverify_release
    from itemsmith.verification.students import Student, StudentConfig

    frozen = _load_release(release, db)
    ranked = _reverify_students(students or [])
    try:
        handles = {spec: make_model(spec) for spec in dict.fromkeys([*judge, *(spec for spec, _ in ranked)])}
    except AgentError as exc:
        raise _fail(str(exc)) from None
    panel = [Judge(JudgeConfig(name=spec, family=handles[spec].provider), handles[spec].model) for spec in judge]
    pool = [Student(StudentConfig(name=spec, rank=rank, model=spec), handles[spec].model) for spec, rank in ranked]
    try:
        # A plain session, committed after each template, so answers already paid for survive a failure.
        with Session(get_engine(db), expire_on_commit=False) as session:
            report = reverify_release(session, frozen, panel, students=pool, workers=workers, commit=True)
    except (StorageError, ReleaseError, RegenerationError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    typer.echo(f"{report.release} re-verified by {', '.join(report.judges)} (run {report.run_id})")
    for t in report.templates:
        old = "-" if t.old_decision is None else ("accepted" if t.old_decision.accepted else "rejected")
        new = "accepted" if t.new_decision.accepted else "rejected"
        typer.echo(f"{t.template_id:40} {old:9} -> {new:9} {t.change.replace('_', ' ')}")
        if t.change == "now_rejected":
            typer.echo(f"{'':40} {'; '.join(t.new_decision.reasons)}")
        for s in t.students:
            before = "-" if s.old_accuracy is None else f"{s.old_accuracy:.2f}"
            typer.echo(f"{'':40} student {s.student}: accuracy {before} -> {s.new_accuracy:.2f}")
    shifts = ", ".join(f"{c.criterion} {c.shift:+.2f}" for c in report.criteria if c.shift is not None)
    typer.echo(f"score shifts (new - old mean): {shifts or 'no template scored by both panels'}")
    alpha = "n/a" if report.agreement is None else f"{report.agreement:.3f}"
    typer.echo(f"agreement old vs new panel (Krippendorff's alpha, interval): {alpha}")
    calls = report.judge_calls
    typer.echo(f"judges: {calls.calls} model calls, {calls.fresh} scores drawn, {calls.cached} reused from the bank")
    if report.student_calls is not None:
        calls = report.student_calls
        typer.echo(f"students: {calls.calls} model calls, {calls.cached} answers reused from the bank")


# --- API keys of the service -----------------------------------------------------------------

keys_app = typer.Typer(help="API keys of the service (stored as hashes; a key is shown once).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(owner: Annotated[str, typer.Argument(help="Whose banks the key sees.")],
                name: Annotated[str, typer.Option("--name", help="A label, e.g. the person or machine.")] = "",
                db: DbOpt = None) -> None:
    """Create an API key for OWNER and print it (it is not stored and cannot be shown again)."""
    from itemsmith.service.auth import create_key

    try:
        with _session(db) as session:
            key, record = create_key(session, owner, name)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"API key {record.id} for {record.owner!r} (store it now: it is not shown again):", err=True)
    typer.echo(key)


@keys_app.command("list")
def keys_list(owner: Annotated[str | None, typer.Option("--owner", help="Only this owner's keys.")] = None,
              db: DbOpt = None) -> None:
    """List API keys (id, owner, name, prefix, created, revoked); never the keys themselves."""
    from itemsmith.service.auth import list_keys

    with _session(db) as session:
        keys = list_keys(session, owner)
    for key in keys:
        revoked = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
        typer.echo(f"{key.id:5} {key.owner:24} {key.name:20} {key.prefix}…  {key.created_at:%Y-%m-%d %H:%M}  {revoked}")


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[int, typer.Argument(help="The key's id (see `keys list`).")],
                db: DbOpt = None) -> None:
    """Revoke an API key: requests with it are refused from now on."""
    from itemsmith.service.auth import revoke_key
    from itemsmith.templates_bank.storage import NotFoundError

    try:
        with _session(db) as session:
            record = revoke_key(session, key_id)
    except NotFoundError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"revoked API key {record.id} of {record.owner!r}")


# --- the service -------------------------------------------------------------------------------


@app.command()
def serve(host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
          db: DbOpt = None) -> None:
    """Run the REST API and review page (migrating the database first); jobs run in this process
    unless ITEMSMITH_API_JOB_RUNNER=celery."""
    import uvicorn

    from itemsmith.api.app import create_app
    from itemsmith.api.settings import ApiSettings
    from itemsmith.templates_bank.storage import current_revision, upgrade

    settings = ApiSettings(database_url=db) if db is not None else ApiSettings()
    upgrade(settings.database_url)
    typer.echo(f"database at revision {current_revision(settings.database_url)}; serving on http://{host}:{port}",
               err=True)
    uvicorn.run(create_app(settings), host=host, port=port)


# --- job workers (Celery) ----------------------------------------------------------------------


@app.command()
def worker(
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, max=64,
                                             help="Jobs this worker runs at once.")] = 2,
    pool: Annotated[str, typer.Option("--pool", help="Celery execution pool: threads, prefork or solo.")] = "threads",
    loglevel: Annotated[str, typer.Option("--loglevel", help="Log level: DEBUG, INFO, WARNING, ERROR.")] = "INFO",
) -> None:
    """Run a Celery worker for jobs (broker ITEMSMITH_API_REDIS_URL, database ITEMSMITH_API_DATABASE_URL).
    The API sends jobs here when ITEMSMITH_API_JOB_RUNNER=celery. Start as many as you like; a job
    whose worker is killed is resumed by another one once its lease (ITEMSMITH_API_JOB_LEASE_S) expires."""
    import os

    from itemsmith.api.settings import ApiSettings
    from itemsmith.templates_bank.storage import StorageError, require_current_schema

    if pool not in ("threads", "prefork", "solo"):
        raise _fail(f"--pool {pool!r}: use threads, prefork or solo")
    try:
        from itemsmith.service.jobs.celery_app import app as celery_app
    except ImportError as exc:
        raise _fail(f"workers need Celery ({exc.name} is missing): pip install 'itemsmith[workers]'") from None
    try:
        require_current_schema(ApiSettings().database_url)
    except StorageError as exc:
        raise _fail(str(exc)) from None
    celery_app.worker_main(["worker", f"--concurrency={concurrency}", f"--pool={pool}", f"--loglevel={loglevel}",
                            f"--hostname=itemsmith-{os.getpid()}@%h", "--without-gossip", "--without-mingle"])
