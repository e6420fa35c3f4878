"""`itemsmith judges validate|validate-ladder|list`: which judge models and local student ladders may decide
(a judge, or a ladder of local students, counts once validated)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from itemsmith.cli._common import JsonOpt, ReasoningBudgetOpt, agent_settings, fail, print_json

__all__ = ["app"]

app = typer.Typer(help="Judge models and student ladders: measure how well each separates (good from flawed "
                       "templates, strong from weak students); only a validated one decides.", no_args_is_help=True)


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


@app.command("validate-ladder")
def judges_validate_ladder(
        runs: Annotated[list[Path], typer.Argument(help="Run folders (OUT/RUN_ID, with report.json) where the "
                                                        "ladder answered (itemsmith author --run-advisory-students).",
                                                   exists=True, file_okay=False)],
        as_json: JsonOpt = False) -> None:
    """Measure the separation of the student ladder that answered in RUNS (the probability that, on one
    template, a student of a higher rank is more accurate than one of a lower rank, ties half; 0.5 says
    nothing) and record it: from then on a ladder of local students filters when it reaches
    ITEMSMITH_MIN_LADDER_AUC (0.7) over at least 10 templates, else it stays advisory (skipped by default). Exit code 0 when it is
    validated, 1 when it stays advisory."""
    from pydantic import ValidationError

    from itemsmith.agents.authoring.models import RunReport
    from itemsmith.agents.settings import get_settings
    from itemsmith.agents.stages.ladder_validation import measure_ladder, record_ladder_validation

    reports = []
    for run in runs:
        try:
            report = RunReport.model_validate_json((run / "report.json").read_text())
        except (OSError, ValidationError) as exc:
            raise fail(f"{run}: not a run folder with a report.json ({exc})") from None
        reports += [r.students for slot in report.slots for attempt in slot.attempts for r in attempt.verification
                    if r.students is not None and r.students.responses]
    if not reports:
        raise fail("no student answered in these runs (the ladder was skipped: author with "
                   "--run-advisory-students to measure it)")
    settings = get_settings()
    validation = measure_ladder(reports, source=", ".join(str(run) for run in runs))
    try:
        path = record_ladder_validation(validation, settings)
    except ValueError as exc:
        raise fail(str(exc)) from None
    decisive = validation.decisive(settings.min_ladder_auc)
    if as_json:
        print_json({**validation.model_dump(mode="json"), "validated": decisive, "file": str(path)})
    else:
        typer.echo(f"{validation.ladder}: {validation.describe()}: "
                   f"{'validated, it filters' if decisive else 'advisory, skipped by default'} (recorded in {path})")
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
