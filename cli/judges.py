"""`itemsmith judges validate|list`: which judge models may decide (a judge counts once validated)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from itemsmith.cli._common import JsonOpt, ReasoningBudgetOpt, agent_settings, fail, print_json

__all__ = ["app"]

app = typer.Typer(help="Judge models: measure how well each separates good from flawed templates; only a "
                       "validated judge decides.", no_args_is_help=True)


@app.command("validate")
def judges_validate(
        judge: Annotated[str, typer.Option("--judge", help="The judge's model spec, e.g. openai:gpt-4o.")],
        corpus: Annotated[Path, typer.Option("--corpus", help="A corpus of known templates: a folder with a "
                                                                 "manifest.toml of [[template]] entries (file, kind "
                                                                 "good/flawed/gaming, handler), as "
                                                                 "benchmarks/semantic_corpus.")],
        per_kind: Annotated[int | None, typer.Option("--per-kind", min=1,
                                                     help="Only the first N templates of each kind.")] = None,
        reasoning_budget: ReasoningBudgetOpt = None,
        as_json: JsonOpt = False) -> None:
    """Score every template of CORPUS with JUDGE as the panel does, measure its separation of good and
    flawed templates (AUC of its mean score; 0.5 is chance) and record it: from then on the judge decides
    when the AUC reaches ITEMSMITH_MIN_JUDGE_AUC (0.7), else it stays advisory. Exit code 0 when it is
    validated, 1 when it stays advisory."""
    import asyncio

    from itemsmith.agents.llm.spec import ModelSpec
    from itemsmith.agents.stages.judge_validation import measure_judge, record_validation

    try:
        spec = ModelSpec.parse(judge)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--judge") from None
    settings = agent_settings(reasoning_budget)

    def progress(kind: str, file: str, scores: dict[str, float]) -> None:
        mean = sum(scores.values()) / len(scores) if scores else None
        typer.echo(f"  {kind:7} {file}: {'unscored' if mean is None else f'{mean:.1f}'}", err=True)

    try:
        validation = asyncio.run(measure_judge(spec, corpus, settings=settings, per_kind=per_kind,
                                               on_template=progress))
    except (FileNotFoundError, ValueError) as exc:
        raise fail(str(exc)) from None
    path = record_validation(validation, settings)
    decisive = validation.decisive(settings.min_judge_auc)
    if as_json:
        print_json({**validation.model_dump(mode="json"), "validated": decisive, "file": str(path)})
    else:
        auc = "not measurable" if validation.auc is None else f"{validation.auc:.3f}"
        typer.echo(f"{validation.judge}: AUC {auc} over {validation.good} good and {validation.flawed} flawed "
                   f"templates: {'validated, it decides' if decisive else 'advisory, its scores decide nothing'} "
                   f"(recorded in {path})")
    if not decisive:
        raise typer.Exit(1)


@app.command("list")
def judges_list(as_json: JsonOpt = False) -> None:
    """The recorded judge validations: each judge's AUC, the corpus it was measured on, and whether it decides."""
    from itemsmith.agents.settings import get_settings
    from itemsmith.agents.stages.judge_validation import load_validations, validations_path

    settings = get_settings()
    try:
        validations = load_validations(settings)
    except ValueError as exc:
        raise fail(str(exc)) from None
    rows = [{**v.model_dump(mode="json"), "validated": v.decisive(settings.min_judge_auc)}
            for v in validations.values()]
    if as_json:
        print_json(rows)
        return
    if not rows:
        typer.echo(f"no judge validated yet ({validations_path(settings)}): every judge is advisory; measure one with "
                   "itemsmith judges validate --judge SPEC --corpus DIR")
        return
    for row in rows:
        auc = "n/a" if row["auc"] is None else f"{row['auc']:.3f}"
        typer.echo(f"{row['judge']}: AUC {auc} ({row['good']} good, {row['flawed']} flawed, {row['corpus']}, "
                   f"{row['measured_at'][:10]}): {'decides' if row['validated'] else 'advisory'}")
