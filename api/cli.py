"""The `itemsmith` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from handlers import BUILTIN_HANDLERS, HandlerSourceError
from templates_bank.curated import CuratedTemplateError, get_curated, load_curated
from templates_bank.rendering import TextFormat, render_item
from templates_bank.schema import Item, RunStatus

app = typer.Typer(help="Author, verify and export time-series reasoning benchmarks.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
handlers_app = typer.Typer(help="Dataset handlers.", no_args_is_help=True)
bank_app = typer.Typer(help="The curated template bank.", no_args_is_help=True)
app.add_typer(handlers_app, name="handlers")
app.add_typer(bank_app, name="bank")

SamplesOpt = Annotated[int, typer.Option("-n", "--samples", min=1, max=1000, help="Items to sample.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the run; same seed, same items.")]


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
        summary = cls.description.strip().splitlines()[0] if cls.description.strip() else ""
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
    from sandbox import run_template

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
    from sandbox import SandboxLimits
    from verification.structure import check_structure

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
    from sandbox import run_template

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
