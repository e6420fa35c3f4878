"""`itemsmith release create|list|show|export|verify|evaluate|reverify|calibrate|audit`: frozen, numbered
bank states (their items stored with them) and what is done with them."""

from __future__ import annotations

import secrets
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from itemsmith.cli._common import (
    NO_VERDICT,
    DbOpt,
    JsonOpt,
    ModelSpec,
    ReasoningBudgetOpt,
    ReleaseArg,
    StudentOpt,
    WorkersOpt,
    agent_settings,
    bank_session,
    fail,
    load_release,
    local_sandbox,
    model_spec,
    parse_students,
    print_json,
    progress_shown,
    usage_error,
    usage_line,
)
from itemsmith.cli._interrupt import say_on_interrupt
from itemsmith.items.text_format import TextFormat

if TYPE_CHECKING:
    from itemsmith.sandbox import SandboxLimits
    from itemsmith.templates_bank.releases import Release
    from itemsmith.templates_bank.reverification import ReverificationReport

__all__ = ["app"]

app = typer.Typer(help="Releases: frozen, numbered bank states; export, verify, evaluate, re-verify, calibrate them.",
                  no_args_is_help=True)

TextFormatsOpt = Annotated[list[TextFormat] | None, typer.Option(
    "--text-format", help="Text format of the series (repeatable: items are answered in each; default plain).")]
DecimalsOpt = Annotated[int, typer.Option(min=0, max=10, help="Series decimals in prompts.")]


@app.command("create")
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
    regenerate: Annotated[bool, typer.Option(
        "--regenerate", help="Run every template in the sandbox, even runs an earlier release already generated.")] = False,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Freeze a bank's approved/accepted templates into its next numbered release and store its items. A
    (template, seed) run an earlier release generated with the same template source, handler code and data,
    seed, sample count and itemsmith, numpy and pandas is reused; the others run in the sandbox."""
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseCreate, ReleaseError, create_release
    from itemsmith.templates_bank.storage import StorageError

    request = ReleaseCreate(bank=bank, seeds=list(range(first_seed, first_seed + seeds)), num_samples=samples,
                            template_ids=template, created_by=by, note=note)
    try:
        with (bank_session(db) as session,
              progress_shown("(template, seed) runs generated or reused", enabled=not as_json) as shown):
            manifest = create_release(session, request, workers=workers, limits=local_sandbox, reuse=not regenerate,
                                      on_progress=shown).manifest
    except (StorageError, ReleaseError, RegenerationError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(manifest)
        return
    typer.echo(f"released {manifest.ref}: {manifest.counts.templates} templates, {manifest.counts.items} items, "
               f"checksum {manifest.checksum}")


@app.command("list")
def release_list(bank: Annotated[str, typer.Argument(help="Bank.")], db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List a bank's releases."""
    from itemsmith.templates_bank.releases import list_releases
    from itemsmith.templates_bank.storage import StorageError

    try:
        with bank_session(db) as session:
            manifests = list_releases(session, bank)
    except StorageError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json([m.model_dump(mode="json") for m in manifests])
        return
    for m in manifests:
        typer.echo(f"{m.ref:24} {m.created_at:%Y-%m-%d %H:%M} {m.created_by:16} {m.counts.templates:5} templates "
                   f"{m.counts.items:8} items  {m.checksum[:12]}  {m.note}")


@app.command("show")
def release_show(release: ReleaseArg, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Print a release's manifest (indented JSON; one line with --json)."""
    manifest = load_release(release, db).manifest
    if as_json:
        print_json(manifest)
        return
    typer.echo(manifest.model_dump_json(indent=2))


@app.command("export")
def release_export(
    release: ReleaseArg,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Output format: jsonl, hf, lm-eval or inspect.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (must not exist unless --force).",
                                      file_okay=False)],
    text_format: Annotated[TextFormat, typer.Option(
        "--text-format", help="Series format in prompts.")] = TextFormat.plain,
    decimals: DecimalsOpt = 2,
    plots: Annotated[bool, typer.Option("--plots", help="Also write PNG plots (jsonl, hf).")] = False,
    license_: Annotated[str, typer.Option("--license", help="License in the dataset card (hf).")] = "other",
    force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a release: its stored items, checked against the manifest, streamed to files (plots drawn once
    and cached)."""
    from itemsmith.templates_bank.exporters import EXPORTERS, ExportError, ExportOptions, export_release
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError

    if fmt not in EXPORTERS:
        raise usage_error(f"--format {fmt!r}: use one of {', '.join(EXPORTERS)}")
    frozen = _release_with_items(release, db)
    options = ExportOptions(text_format=text_format, decimals=decimals, plots=plots, license=license_)
    try:
        rows = frozen.manifest.counts.items
        with progress_shown("exported items", enabled=not as_json) as shown:
            report = export_release(frozen, fmt, out, options, workers=workers, limits=_regeneration_limits(frozen),
                                    overwrite=force, on_row=None if shown is None else lambda done: shown(done, rows))
    except (ExportError, ReleaseError, RegenerationError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json({"release": frozen.manifest.ref, "format": fmt, "out": str(out), "items": report.rows})
        return
    typer.echo(f"exported {frozen.manifest.ref} as {fmt}: {report.rows} items in {out}")


def _release_with_items(ref: str, db: str | None) -> Release:
    """`load_release` for a command that reads the items; says so when they will be regenerated."""
    frozen = load_release(ref, db)
    if frozen.stored is None:
        typer.echo(f"{frozen.manifest.ref} was made before items were stored: its items are regenerated in the "
                   f"sandbox, every time, until `itemsmith release verify {frozen.manifest.ref}` stores them",
                   err=True)
    return frozen


def _regeneration_limits(frozen: Release) -> SandboxLimits | None:
    """The local sandbox's limits for a release whose items are regenerated; None for one whose items
    are stored: reading them needs no sandbox, and the sandbox is not even imported."""
    return None if frozen.stored is not None else local_sandbox()


@app.command("verify")
def release_verify(
    release: ReleaseArg,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Prove that a release still reproduces: run every template again on the release's seeds and compare
    the items byte for byte with those it stored; says which templates, runs and fields differ (exit code
    1). A release made before items were stored is checked against its manifest's hashes, and its items
    are then stored."""
    from itemsmith.templates_bank.releases import ReleaseError
    from itemsmith.templates_bank.reproducibility import reproduction_table, verify_release

    frozen = load_release(release, db)
    try:
        with (bank_session(db) as session,
              progress_shown("regenerated (template, seed) runs", enabled=not as_json) as shown):
            report = verify_release(session, frozen, workers=workers, limits=local_sandbox(), on_progress=shown)
    except ReleaseError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(report)
    else:
        typer.echo(reproduction_table(report))
    if not report.reproduced:
        raise typer.Exit(code=1)


@app.command("evaluate")
def release_evaluate(
    release: ReleaseArg,
    model: Annotated[ModelSpec, typer.Option(
        "--model", "-m", help="Model under test: openai:gpt-4o, anthropic:..., openai_compatible:NAME@URL, "
                              "local:qwen2.5-coder-1.5b, scripted:FILE.", parser=model_spec)],
    text_formats: TextFormatsOpt = None,
    decimals: DecimalsOpt = 2,
    fresh_seed: Annotated[bool, typer.Option(
        "--fresh-seed", help="New instances of the same templates, on seeds the release never used.")] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help="With --fresh-seed or --adaptive: the seed the new seeds (and adaptive picks) are "
                              "drawn from (default random; recorded in the report).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=256, help="Model calls in flight.")] = 4,
    adaptive: Annotated[bool, typer.Option(
        "--adaptive", help="Adaptive: pick templates by Fisher information at the current ability, one fresh "
                           "instance each, until --target-se or --max-items (needs a calibrated release).")] = False,
    max_items: Annotated[int, typer.Option("--max-items", min=1, max=10_000, help="With --adaptive: item budget.")] = 50,
    target_se: Annotated[float, typer.Option("--target-se", min=0.01, help="With --adaptive: stop at this SE.")] = 0.3,
    resume: Annotated[str | None, typer.Option(
        "--resume", help="Resume the evaluation with this id (printed when it starts; give the same options).")] = None,
    out_file: Annotated[Path | None, typer.Option(
        "--out-file", help="Also write the whole report (JSON) to this file.", dir_okay=False)] = None,
    workers: WorkersOpt = 1,
    reasoning_budget: ReasoningBudgetOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate a model on a release: accuracy overall, per category, dataset, text format, series
    length and queried position, and its IRT ability (on the bank's current calibration). Every
    answer is stored in the bank (calibration reads them); a failed evaluation is resumed with
    --resume ID. With --adaptive: ability +- SE from a few informative templates."""
    from itemsmith.agents.errors import AgentError, ProviderConfigError
    from itemsmith.service.release_operations import evaluate, evaluate_adaptive
    from itemsmith.templates_bank.adaptive import AdaptiveConfig, AdaptiveReport, adaptive_table
    from itemsmith.templates_bank.calibration import current_parameters, refresh_calibration
    from itemsmith.templates_bank.evaluation import EvaluationReport, EvaluationStore, report_table
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError

    if seed is not None and not (fresh_seed or adaptive):
        raise usage_error("--seed only applies with --fresh-seed or --adaptive")
    if adaptive and fresh_seed:
        raise usage_error("--adaptive always asks fresh instances; leave out --fresh-seed")
    settings = agent_settings(reasoning_budget)
    respondent = str(model)  # the name its answers are stored and calibrated under
    frozen = load_release(release, db) if fresh_seed or adaptive else _release_with_items(release, db)
    if fresh_seed or adaptive:
        try:
            frozen.refuse_fresh_instances("--adaptive" if adaptive else "--fresh-seed")
        except ReleaseError as exc:
            raise fail(str(exc)) from None
    formats = text_formats or [TextFormat.plain]
    drawn = (seed if seed is not None else secrets.randbits(31)) if (fresh_seed or adaptive) else None
    report: EvaluationReport | AdaptiveReport
    evaluation_id = resume or f"eval-{uuid.uuid4().hex[:12]}"
    resume_hint = f"--resume {evaluation_id}" + ("" if drawn is None else f" --seed {drawn}")
    typer.echo(f"evaluation {evaluation_id} (if it stops, resume with {resume_hint})", err=True)
    say_on_interrupt(f"the answers so far are stored: resume with {resume_hint}")
    try:
        with bank_session(db) as session, progress_shown("answered", enabled=not (as_json or adaptive)) as answered:
            store = EvaluationStore.open(session, frozen, evaluation_id, adaptive=adaptive)
            parameters = current_parameters(session, frozen)
            # models come from the one factory (agents.llm.factory), as in the evaluate job
            if adaptive:
                config = AdaptiveConfig(target_se=target_se, max_items=max_items, seed=drawn or 0)
                report = evaluate_adaptive(frozen, model=model, parameters=parameters, config=config,
                                           text_format=formats[0], decimals=decimals, store=store, settings=settings,
                                           limits=local_sandbox())
            else:
                report = evaluate(frozen, model=model, formats=formats, fresh_seed=drawn, concurrency=concurrency,
                                  decimals=decimals, workers=workers, store=store, parameters=parameters,
                                  settings=settings, limits=local_sandbox(),
                                  on_progress=answered)
            refreshed = refresh_calibration(session, frozen, evaluation_id, respondent)
    except (ProviderConfigError, ReleaseError, RegenerationError, ValueError) as exc:
        raise fail(str(exc)) from None
    except AgentError as exc:  # a model call failed for good, after its retries
        raise fail(f"{exc}; the answers so far are stored: resume with {resume_hint}") from None
    except Exception as exc:  # noqa: BLE001 - a model failing half way: what was answered is stored
        raise fail(f"{type(exc).__name__}: {exc}; the answers so far are stored: resume with {resume_hint}") from None
    if out_file is not None:
        out_file.write_text(report.model_dump_json(indent=1) + "\n")
    if as_json:
        print_json(report)
        return
    typer.echo(adaptive_table(report) if isinstance(report, AdaptiveReport) else report_table(report))
    calibration = refreshed if isinstance(refreshed, str) else f"refreshed ({refreshed.calibration_id})"
    typer.echo(f"\ncalibration: {calibration}")
    typer.echo(f"model calls: {usage_line(report.usage)}")
    if out_file is not None:
        typer.echo(f"\nfull report with every response: {out_file}")


@app.command("reverify")
def release_reverify(
    release: ReleaseArg,
    judge: Annotated[list[ModelSpec], typer.Option(
        "--judge", help="Judge model spec of the new panel (repeatable), e.g. openai:gpt-4o, scripted:FILE.",
        parser=model_spec)],
    student: StudentOpt = None,
    workers: WorkersOpt = 1,
    reasoning_budget: ReasoningBudgetOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge a release again with a new panel: the new verdicts are stored beside the old ones (answers
    already in the bank for the same model, prompt and item are reused, not asked again), and the
    difference is printed. A template the new panel rejects is declined for the next release unless a
    person approved it. Exit code 3 when some templates got no new verdict (their model calls failed;
    run it again: the answers already drawn are reused)."""
    from itemsmith.agents.errors import AgentError
    from itemsmith.service.release_operations import reverify
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError
    from itemsmith.templates_bank.storage import BankSession, StorageError, get_engine

    students = parse_students(student)
    settings = agent_settings(reasoning_budget)
    frozen = _release_with_items(release, db)
    try:
        # a plain session: committed after each template, so answers already paid for survive a failure
        with BankSession(get_engine(db), expire_on_commit=False) as session:
            report = reverify(session, frozen, judges=judge, students=students, workers=workers, settings=settings,
                              limits=local_sandbox())
    except AgentError as exc:
        raise fail(str(exc)) from None
    except (StorageError, ReleaseError, RegenerationError, ValueError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(report)
    else:
        _print_reverification(report)
    if report.errored:  # those templates have no new verdict: not a finished re-verification
        raise typer.Exit(code=NO_VERDICT)


def _print_reverification(report: ReverificationReport) -> None:
    typer.echo(f"{report.release} re-verified by {', '.join(report.judges)} (run {report.run_id})")
    if report.advisory:
        typer.echo("advisory panel: no judge is validated (itemsmith judges validate), so its decisions below are "
                   "notes and change no template's status")
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
    typer.echo(f"model calls: {usage_line(report.usage)}")
    if report.errored:
        typer.echo(f"{len(report.errored)} template(s) without a new verdict (their calls failed): run it again "
                   "(the answers already drawn are reused)", err=True)


@app.command("calibrate")
def release_calibrate(
    release: ReleaseArg,
    priors: Annotated[bool, typer.Option(
        "--priors", help="Fit even with fewer respondents than --min-respondents (the priors carry the fit).")] = False,
    min_respondents: Annotated[int, typer.Option("--min-respondents", min=2, max=1000,
                                                 help="Distinct respondents a fit needs.")] = 5,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit the template-level 2PL to every stored answer to the release's templates (student pools,
    re-verifications, evaluations) and store the parameters as new irt verdicts (history kept);
    lists the templates to review (negative or near-zero discrimination: likely mis-keyed)."""
    from itemsmith.templates_bank.calibration import CalibrationError, CalibrationOptions, calibrate_release

    frozen = load_release(release, db)
    try:
        with bank_session(db) as session:
            report = calibrate_release(session, frozen, CalibrationOptions(priors=priors, min_respondents=min_respondents))
    except CalibrationError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(report)
        return
    typer.echo(f"{report.what} calibrated ({report.calibration_id}): {len(report.respondents)} respondents, "
               f"{len(report.templates)} templates{'' if report.converged else ' (EM did not converge)'}")
    if report.below_minimum:
        typer.echo(f"warning: fewer respondents than {report.min_respondents}; the estimates rest mostly on the priors")
    typer.echo(f"{'template':40} {'a':>6} {'(se)':>6} {'b':>7} {'(se)':>6} {'p':>5} {'n':>5}  flags")
    for t in report.templates:
        se_a = "n/a" if t.discrimination_se is None else f"{t.discrimination_se:.2f}"
        se_b = "n/a" if t.difficulty_se is None else f"{t.difficulty_se:.2f}"
        typer.echo(f"{t.template_id:40} {t.discrimination:6.2f} {se_a:>6} {t.difficulty:+7.2f} {se_b:>6} "
                   f"{t.proportion_correct:5.2f} {t.n_responses:5d}  {', '.join(t.flags)}")
    for name in report.uncalibrated:
        typer.echo(f"{name:40} (no answers yet: not calibrated)")
    typer.echo("respondents: " + ", ".join(f"{r.respondent} {r.ability:+.2f}+-{r.se:.2f}" for r in report.respondents))
    if report.needs_review:
        typer.echo(f"to review (negative or near-zero discrimination, likely mis-keyed): {', '.join(report.needs_review)}")


@app.command("audit")
def release_audit(
    release: ReleaseArg,
    all_groups: Annotated[bool, typer.Option("--all", help="List every group, not only the failing ones.")] = False,
    workers: WorkersOpt = 1,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Audit a release's items as a fixed set (made for imported benchmarks): blind solvers and item checks on
    exactly the items each group holds, with each test's power, per group, per category and overall."""
    from itemsmith.templates_bank.regeneration import RegenerationError
    from itemsmith.templates_bank.releases import ReleaseError
    from itemsmith.templates_bank.static_items import audit_release, audit_table

    frozen = _release_with_items(release, db)
    try:
        report = audit_release(frozen, workers=workers, limits=_regeneration_limits(frozen))
    except (ReleaseError, RegenerationError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(report)
        return
    typer.echo(f"{frozen.manifest.ref}: {frozen.manifest.counts.items} items in {frozen.manifest.counts.templates} groups")
    typer.echo(audit_table(report, all_groups=all_groups))
