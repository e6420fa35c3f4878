"""`itemsmith author`: the authoring agents on a handler, resumable."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from itemsmith.cli._common import (
    DbOpt,
    HandlerOpt,
    ModelSpec,
    ReasoningBudgetOpt,
    agent_settings,
    bank_session,
    fail,
    local_sandbox,
    model_spec,
    parse_students,
    print_json,
    usage_error,
)
from itemsmith.cli._interrupt import say_on_interrupt

if TYPE_CHECKING:
    from itemsmith.agents.authoring.models import RunReport
    from itemsmith.service.bank_import import ImportReport
    from itemsmith.templates_bank.diversity import TemplateDiversity

__all__ = ["author", "cli_user", "diversity_summary", "import_summary"]


def author(
    handler: HandlerOpt,
    task: Annotated[str, typer.Option("--task", help="What the benchmark should test, in plain words.")],
    templates: Annotated[int, typer.Option("--templates", "-N", min=1, max=1000, help="Template slots to fill.")] = 5,
    generator: Annotated[ModelSpec | None, typer.Option(
        "--generator", help="Model spec, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
                            "openai_compatible:NAME@URL, local:qwen2.5-coder-1.5b. Default: a hosted model when "
                            "its API key is set, else the local model.", parser=model_spec)] = None,
    planner: Annotated[ModelSpec | None, typer.Option(
        "--planner", help="Model spec of the planner (default: the generator).", parser=model_spec)] = None,
    rounds: Annotated[int, typer.Option("--rounds", min=1, max=20, help="Generate/refine rounds per slot.")] = 3,
    restart_broken: Annotated[bool | None, typer.Option(
        "--restart-broken/--no-restart-broken",
        help="After a round whose code did not run (or was resent), start the next one afresh from the brief "
             "without the curated example instead of refining that code. Default: on for a local generator.")] = None,
    slots: Annotated[int, typer.Option("--slots", min=1, max=256, help="Slots authored concurrently.")] = 4,
    sandbox_workers: Annotated[int, typer.Option("--sandbox-workers", min=1, max=64)] = 2,
    num_samples: Annotated[int | None, typer.Option(
        "--num-samples", min=1, max=100, help="Items per structure-check run (default: drawn per check).")] = None,
    examples: Annotated[int, typer.Option(
        "--examples", min=0, max=6, help="Curated examples per slot in the generator prompt (those nearest its "
                                         "brief).")] = 1,
    out: Annotated[Path, typer.Option("--out", help="Output folder (a run writes OUT/RUN_ID/).", file_okay=False)]
        = Path("out"),
    checkpoint: Annotated[str | None, typer.Option(
        "--checkpoint", help="SQLite file or postgresql:// URL (default OUT/checkpoints.sqlite).")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Resume this run (or name a new one).")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help="Structure-check seed (default: drawn per check, so a template cannot fingerprint "
                              "it).")] = None,
    judge: Annotated[list[ModelSpec] | None, typer.Option(
        "--judge", help="Judge model spec (repeat for a panel). Default: ITEMSMITH_DEFAULT_JUDGES (the local "
                        "qwen2.5-coder-1.5b when installed).", parser=model_spec)] = None,
    no_judges: Annotated[bool, typer.Option("--no-judges", help="Run no judge panel.")] = False,
    student: Annotated[list[str] | None, typer.Option(
        "--student", help="Student as SPEC@RANK, larger rank = more capable (repeat for a pool); local models "
                          "answer by letter log-likelihood. Default: ITEMSMITH_DEFAULT_STUDENTS (local "
                          "smollm2-135m@1, qwen2.5-coder-0.5b@2, qwen2.5-coder-1.5b@3, those installed).")] = None,
    no_students: Annotated[bool, typer.Option("--no-students", help="Run no student pool (and no capability "
                                                                    "filter).")] = False,
    run_advisory_students: Annotated[bool, typer.Option(
        "--run-advisory-students", help="Run a ladder of local students even when its separation is not measured to "
                                        "be good enough (ITEMSMITH_ADVISORY_STUDENTS=run); by default it is skipped "
                                        "and the run says so.")] = False,
    no_live: Annotated[bool, typer.Option(
        "--no-live", help="Lines instead of a live table: each change of phase, and a status line (elapsed, phase, "
                          "tokens, ETA) every 30 s.")] = False,
    allow_partial: Annotated[bool, typer.Option(
        "--allow-partial", help="Exit 0 when at least one template, but fewer than asked, was accepted.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the run's summary as one JSON object.")] = False,
    reasoning_budget: ReasoningBudgetOpt = None,
    bank: Annotated[str | None, typer.Option(
        "--bank", help="Also store the accepted templates with their verdicts in this bank (as the author job does; "
                       "calibrated when there is a student pool).")] = None,
    db: DbOpt = None,
) -> None:
    """Author item templates for a handler: plan, generate, check in the sandbox, audit the items, judge,
    test on students, refine. Before it starts, the run prints (on stderr) which stages run and with
    which models, then its progress: the phase, the tokens of the model call in flight, an ETA (a
    live table on a terminal; with --no-live, a line per change and a status line every 30 s).
    Resumable; a finished run named again with --run-id only prints its stored report. Exit code 0
    only when every slot's template was accepted (or, with --allow-partial, at least one); 1 otherwise."""
    if no_judges and judge:
        raise usage_error("--judge and --no-judges exclude each other")
    if no_students and student:
        raise usage_error("--student and --no-students exclude each other")

    from pydantic import ValidationError

    from itemsmith.agents.config import AuthorConfig  # the request alone: checked before the agents are imported

    try:
        config = AuthorConfig(handler=handler, task=task, templates=templates, generator=generator, planner=planner,
                              rounds=rounds, restart_broken=restart_broken, slots=slots,
                              sandbox_workers=sandbox_workers, num_samples=num_samples, examples=examples, out_dir=out,
                              checkpoint=checkpoint, run_id=run_id, seed=seed,
                              judges=[] if no_judges else judge or None,
                              students=[] if no_students else parse_students(student) or None)
    except ValidationError as exc:
        raise usage_error("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    from itemsmith.agents.errors import AgentError
    from itemsmith.agents.stages.pipeline import authoring_models, check_models, resolve_pipeline, run_header

    try:  # every role's model can be built here: checked before the agents are imported
        settings = agent_settings(reasoning_budget)
        if run_advisory_students:
            settings = settings.model_copy(update={"advisory_students": "run"})
        pipeline = resolve_pipeline(config, settings)
        check_models(pipeline, *authoring_models(config, settings), settings)
    except AgentError as exc:
        raise fail(str(exc)) from None
    if bank is not None:
        _require_bank(bank, handler, db)

    from itemsmith.agents.profile import profile_handler
    from itemsmith.handlers import HandlerSourceError
    from itemsmith.sandbox import SandboxError, SandboxPool

    limits = local_sandbox()
    pool: SandboxPool | None = None
    try:  # the handler loads and profiles in the sandbox: also checked before the agents are imported
        pool = SandboxPool(handler, workers=sandbox_workers, limits=limits)
        profile = profile_handler(pool)
    except (AgentError, HandlerSourceError, SandboxError) as exc:
        if pool is not None:
            pool.close()
        raise fail(str(exc)) from None

    import asyncio

    from itemsmith.agents.authoring.progress import ProgressTable
    from itemsmith.agents.authoring.run import author as run_author
    from itemsmith.agents.authoring.run import new_run_id

    run_id = run_id or new_run_id()
    config = config.model_copy(update={"run_id": run_id})
    typer.echo(f"run {run_id} (if it stops, resume with --run-id {run_id})", err=True)
    say_on_interrupt(f"finished templates are kept: resume with --run-id {run_id}")
    try:
        with pool, ProgressTable(max_rounds=rounds, live=not no_live and sys.stderr.isatty()) as progress:
            report = asyncio.run(run_author(  # the stages are listed once their models are known to build
                config, on_event=progress, on_activity=progress.activity, settings=settings, pipeline=pipeline,
                limits=limits, pool=pool, profile=profile,
                on_checked=lambda: typer.echo("\n".join(run_header(config, settings, pipeline)), err=True)))
    except (AgentError, HandlerSourceError, SandboxError) as exc:
        raise fail(str(exc)) from None
    if progress.run_phase == "finished earlier":
        typer.echo(f"run {run_id} had finished: its stored report (report.json is left as it was)", err=True)
    summary = report.summary()
    imported = _store_in_bank(report, bank, db) if bank is not None else None
    if as_json:
        print_json({**summary, "bank": imported.model_dump(mode="json")} if imported is not None else summary)
    else:
        typer.echo(json.dumps(summary, indent=1))
        typer.echo(f"accepted templates and report: {out / report.run_id}/ (resume with --run-id {report.run_id})")
        if imported is not None:
            typer.echo(import_summary(imported))
    errored = [slot for slot in report.slots if slot.status == "errored"]
    if errored:
        typer.echo(f"{len(errored)} slot(s) stopped because the provider failed ({errored[0].error}): resume with "
                   f"--run-id {report.run_id}", err=True)
    accepted = len(report.accepted)
    if accepted < templates and not (allow_partial and accepted):
        typer.echo(f"{accepted} of {templates} templates accepted" + ("" if allow_partial else
                   " (--allow-partial: exit 0 when at least one is)"), err=True)
        raise typer.Exit(code=1)


def _require_bank(bank: str, handler: str, db: str | None) -> None:
    """Fail before authoring when the bank to store into does not exist or is another handler's."""
    from itemsmith.templates_bank.handler_identity import HandlerMismatch, require_same_handler
    from itemsmith.templates_bank.storage import StorageError, get_bank

    try:
        with bank_session(db) as session:
            row = get_bank(session, bank)
        require_same_handler(row.name, row.handler, handler)
    except (StorageError, HandlerMismatch) as exc:
        raise fail(str(exc)) from None


def _store_in_bank(report: RunReport, bank: str, db: str | None) -> ImportReport:
    from itemsmith.service.bank_import import RunImportError, import_run
    from itemsmith.templates_bank.storage import StorageError

    try:
        with bank_session(db) as session:
            return import_run(session, report, bank, created_by=cli_user(), limits=local_sandbox())
    except (RunImportError, StorageError) as exc:
        raise fail(f"{exc}; the run is kept: store it later with `itemsmith bank import-run "
                   f"OUT/{report.run_id} --bank {bank}`") from None


def cli_user() -> str:
    """Who stores templates from the command line: ``cli:<login name>``."""
    import getpass

    return f"cli:{getpass.getuser()}"


def import_summary(imported: ImportReport) -> str:
    """What an import stored, and how calibration went, as text."""
    fresh = sum(t.stored for t in imported.templates)
    lines = [f"bank {imported.bank}: {len(imported.templates)} accepted template(s) of run {imported.run_id} "
             f"({fresh} stored now, {len(imported.templates) - fresh} on record already)"]
    lines += [f"  {t.template_key:40} version {t.version_id}  {t.title}" for t in imported.templates]
    if imported.diversity is not None:
        lines.append(diversity_summary(imported.diversity))
    if imported.calibration is not None:
        review = imported.calibration.needs_review
        lines.append(f"calibrated ({imported.calibration.calibration_id}); to review: {', '.join(review) or 'none'}")
    elif imported.calibration_skipped:
        lines.append(f"not calibrated: {imported.calibration_skipped}")
    return "\n".join(lines)


def diversity_summary(summary: TemplateDiversity) -> str:
    """TimeSeriesExamAgent's diversity numbers and the near-duplicate pairs, as text."""
    report = summary.report
    if report is None:
        numbers = "too few items to measure"
    else:
        embedding = ("n/a" if report.embedding_distance_mean is None
                     else f"{report.embedding_distance_mean:.3f}")
        numbers = (f"embedding distance {embedding}, Levenshtein {report.levenshtein_mean:.3f} "
                   f"({report.n_sampled} of {report.n_texts} item texts)")
    pairs = ", ".join(f"{p.first} ~ {p.second}" for p in summary.near_duplicates) or "none"
    return f"diversity ({summary.embedder}): {numbers}; near duplicates: {pairs}"
