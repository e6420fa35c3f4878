"""`itemsmith curated list|sample`: the curated templates shipped with itemsmith."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from itemsmith.cli._common import JsonOpt, SamplesOpt, SeedOpt, fail, local_sandbox, print_json, usage_error

__all__ = ["app"]

app = typer.Typer(help="The curated templates shipped with itemsmith.", no_args_is_help=True)


@app.command("list")
def curated_list(as_json: JsonOpt = False) -> None:
    """List the curated templates: id, category, handler, concepts, title."""
    from itemsmith.templates_bank.curated import load_curated

    templates = list(load_curated().values())
    if as_json:
        print_json([{"id": t.id, "category": t.category, "handler": t.handler, "concepts": t.concepts,
                     "title": t.title} for t in templates])
        return
    for t in templates:
        tags = ",".join(t.concepts)
        typer.echo(f"{t.id:40} {t.category:22} {t.handler:10} {tags:28} {t.title}")


@app.command("sample")
def curated_sample(
    out_file: Annotated[Path, typer.Option("--out-file", help="JSONL file to write, one item a line.",
                                           dir_okay=False)],
    every: Annotated[bool, typer.Option("--all", help="Sample every curated template.")] = False,
    template: Annotated[list[str] | None, typer.Option("--template", "-t", help="Curated template (repeatable).")] = None,
    samples: SamplesOpt = 5,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
) -> None:
    """Sample items from curated templates (in the sandbox) into a JSONL file."""
    if every == bool(template):
        raise usage_error("give either --all or one or more --template NAME")
    from itemsmith.items.schema import Item, RunStatus
    from itemsmith.sandbox import run_template
    from itemsmith.templates_bank.curated import CuratedTemplateError, get_curated, load_curated

    try:
        chosen = list(load_curated().values()) if every else [get_curated(name) for name in template or []]
    except CuratedTemplateError as exc:
        raise fail(str(exc)) from None
    failed: dict[str, str] = {}
    rows = 0
    with out_file.open("w") as sink:
        for curated in chosen:
            result = run_template(curated.source, curated.handler or "synthetic", num_samples=samples, seed=seed,
                                  limits=local_sandbox())
            if result.status is not RunStatus.ok:
                failed[curated.id] = f"{result.status.value}: {result.error}"
                typer.secho(f"{curated.id}: {failed[curated.id]}", err=True, fg=typer.colors.RED)
                continue
            for raw in result.items:
                item = Item.model_validate(raw)
                row = {"template_id": curated.id, "category": curated.category, "concepts": curated.concepts,
                       "handler": curated.handler, **item.model_dump(mode="json")}
                sink.write(json.dumps(row) + "\n")
                rows += 1
    if as_json:
        print_json({"out_file": str(out_file), "templates": len(chosen) - len(failed), "items": rows,
                    "failed": failed})
    else:
        typer.echo(f"wrote {len(chosen) - len(failed)} templates x {samples} items to {out_file}")
    if failed:
        raise fail(f"{len(failed)} template(s) failed")
