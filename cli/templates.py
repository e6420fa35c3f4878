"""`itemsmith sample` and `itemsmith check-template`: run one template in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from itemsmith.cli._common import HandlerOpt, JsonOpt, SamplesOpt, SeedOpt, fail, local_sandbox, print_json, usage_error
from itemsmith.items.text_format import TextFormat

__all__ = ["check_template", "sample"]


def _template_source(template: str, handler: str | None) -> tuple[str, str]:
    """(source, handler) for a curated template name or a template file."""
    from itemsmith.templates_bank.curated import CuratedTemplateError, get_curated

    path = Path(template)
    if template.endswith(".py") or path.is_file():
        if not path.is_file():
            raise usage_error(f"template file {template!r} does not exist")
        if handler is None:
            raise usage_error("a template file needs --handler NAME_OR_PATH")
        return path.read_text(), handler
    try:
        curated = get_curated(template)
    except CuratedTemplateError as exc:
        raise fail(str(exc)) from None
    return curated.source, handler or curated.handler or "synthetic"


def sample(
    template: Annotated[str, typer.Option("--template", "-t", help="Curated template name or a template .py file.")],
    handler: Annotated[str | None, typer.Option("--handler", help="Built-in handler name or a handler .py file.")] = None,
    samples: SamplesOpt = 5,
    text_format: Annotated[TextFormat, typer.Option("--text-format", help="Text format of the series.")] = TextFormat.plain,
    decimals: Annotated[int, typer.Option(min=0, max=10, help="Series decimals.")] = 2,
    seed: SeedOpt = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the items as one JSON array.")] = False,
) -> None:
    """Sample items from a template (run in the sandbox) and print them."""
    from itemsmith.items.rendering import render_item, terminal_safe
    from itemsmith.items.schema import Item, RunStatus
    from itemsmith.sandbox import run_template

    source, handler_spec = _template_source(template, handler)
    result = run_template(source, handler_spec, num_samples=samples, seed=seed, limits=local_sandbox())
    if result.status is not RunStatus.ok:
        raise fail(f"template {result.status.value}: {result.error}")
    items = [Item.model_validate(raw) for raw in result.items]
    if as_json:
        print_json([item.model_dump(mode="json") for item in items])
        return
    for number, item in enumerate(items, 1):
        typer.secho(f"--- item {number} ---", bold=True)
        typer.echo(terminal_safe(render_item(item, fmt=text_format, decimals=decimals)))
        typer.echo(terminal_safe(f"Answer: {item.answer_letter}) {item.answer}"))
        if item.rationale:
            typer.echo(terminal_safe(f"Why: {item.rationale}"))


def check_template(
    template_file: Annotated[Path, typer.Argument(help="The template .py file.", exists=True, dir_okay=False)],
    handler: HandlerOpt,
    samples: SamplesOpt = 5,
    seed: SeedOpt = 0,
    wall_s: Annotated[float | None, typer.Option(help="Wall-clock limit per run, seconds.")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Address-space limit per run, MiB.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the structure check on a template in the sandbox. Exit code 0 only when it is ok."""
    from itemsmith.items.rendering import terminal_safe
    from itemsmith.verification.structure import check_structure

    overrides: dict[str, Any] = {k: v for k, v in {"wall_s": wall_s, "memory_mb": memory_mb}.items() if v is not None}
    report = check_structure(template_file.read_text(), handler, num_samples=samples, seed=seed,
                             limits=local_sandbox(**overrides))
    payload = {
        "status": report.status.value,
        "items": [item.model_dump(mode="json") for item in report.items],
        "error": report.error,
        "elapsed_ms": round(report.elapsed_ms, 1),
    }
    if as_json:
        print_json(payload)
    else:
        typer.echo(f"{report.status.value}: {len(report.items)} items in {payload['elapsed_ms']} ms")
        if report.error:
            typer.echo(terminal_safe(report.error))
    raise typer.Exit(code=0 if report.passed else 1)
