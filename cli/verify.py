"""`itemsmith verify`: one template (hand-written, edited, generated) through exactly the stages
`itemsmith author` runs, with the same defaults and the same report (`agents.stages.template_verification`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from itemsmith.cli._common import (
    NO_VERDICT,
    HandlerOpt,
    JsonOpt,
    ReasoningBudgetOpt,
    agent_settings,
    fail,
    local_sandbox,
    print_json,
    usage_error,
    usage_line,
)

__all__ = ["verify"]


def verify(
    template_file: Annotated[Path, typer.Argument(help="The template .py file.", dir_okay=False)],
    handler: HandlerOpt,
    task: Annotated[str | None, typer.Option(
        "--task", help="What the benchmark tests (the judges score relevance against it). Default: "
                       "'questions about the HANDLER data'.")] = None,
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", help="Judge model spec (repeat for a panel). Default: ITEMSMITH_DEFAULT_JUDGES, as author.")] = None,
    no_judges: Annotated[bool, typer.Option("--no-judges", help="Run no judge panel.")] = False,
    student: Annotated[list[str] | None, typer.Option(
        "--student", help="Student as SPEC@RANK (repeat for a pool). Default: ITEMSMITH_DEFAULT_STUDENTS, as "
                          "author.")] = None,
    no_students: Annotated[bool, typer.Option("--no-students", help="Run no student pool (and no capability "
                                                                    "filter).")] = False,
    solver: Annotated[str | None, typer.Option(
        "--solver", help="Model spec of the re-derivation solver. Default: ITEMSMITH_SOLVER, else the generator "
                         "author would use (a hosted model when its key is set, else the local model).")] = None,
    no_rederivation: Annotated[bool, typer.Option("--no-rederivation", help="Run no re-derivation stage.")] = False,
    sandbox_workers: Annotated[int, typer.Option("--sandbox-workers", min=1, max=64)] = 2,
    reasoning_budget: ReasoningBudgetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Verify one template with the stages `author` runs (structure check, item audit, re-derivation,
    judges, students, capability filter), never refining it. Prints the stages (on stderr), then each
    stage's verdict; with --json one object: accepted, errored, stage (the rejecting or errored stage,
    null when accepted), reasons, usage (model calls: answered, cut, failed; tokens, cost) and stages
    (each stage's verdict by name). A stage whose model calls failed, came back empty or were cut is
    errored: no verdict, never a rejection. Exit codes: 0 accepted; 1 rejected, or the verification
    could not run; 2 a wrong command line; 3 errored (no verdict: run it again)."""
    if no_judges and judge:
        raise usage_error("--judge and --no-judges exclude each other")
    if no_students and student:
        raise usage_error("--student and --no-students exclude each other")
    if no_rederivation and solver:
        raise usage_error("--solver and --no-rederivation exclude each other")
    settings = agent_settings(reasoning_budget)
    if not template_file.is_file():
        raise usage_error(f"template file {str(template_file)!r} does not exist")

    from pydantic import ValidationError

    from itemsmith.agents.config import AuthorConfig  # the request alone: checked before the agents are imported

    try:
        source = template_file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"cannot read {template_file}: {exc}") from None
    try:
        config = AuthorConfig(handler=handler, task=task or f"questions about the {handler} data",
                              sandbox_workers=sandbox_workers, judges=[] if no_judges else judge or None,
                              students=[] if no_students else student or None, solver=solver,
                              rederivation=False if no_rederivation else None)
    except ValidationError as exc:
        raise usage_error("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None

    from itemsmith.agents.errors import AgentError
    from itemsmith.agents.stages.pipeline import check_models, header_lines, resolve_pipeline

    try:  # every stage's model can be built here: checked before the agents are imported
        pipeline = resolve_pipeline(config, settings)
        check_models(pipeline, None, None, settings)
    except AgentError as exc:
        raise fail(str(exc)) from None

    import asyncio

    from itemsmith.agents.stages.template_verification import verify_template
    from itemsmith.handlers import HandlerSourceError
    from itemsmith.sandbox import SandboxError

    try:
        typer.echo("\n".join(header_lines(pipeline.stages)), err=True)
        verification = asyncio.run(verify_template(
            source, config, settings=settings, pipeline=pipeline, limits=local_sandbox(),
            on_stage=None if as_json else lambda label: typer.echo(f"{label} ...", err=True)))
    except (AgentError, HandlerSourceError, SandboxError) as exc:
        raise fail(str(exc)) from None
    summary = verification.summary()
    if as_json:
        print_json(summary)
    else:
        from itemsmith.items.rendering import terminal_safe

        for name, stage in summary["stages"].items():
            state = ("not run" if not stage["ran"] else "errored" if stage["errored"] else
                     "passed" if stage["accepted"] else "rejected")
            typer.echo(f"{name:<14}{state}" + (f" ({stage['about']})" if not stage["ran"] and stage.get("about")
                                                else ""))
            for reason in stage["reasons"]:
                typer.echo(terminal_safe(f"  {reason}"))
        typer.echo(f"model calls: {usage_line(summary['usage'])}")
        stage = verification.decision.stage
        typer.echo("decision: " + ("accepted" if verification.accepted else
                                   f"errored at {stage} (no verdict: its model calls failed; run it again)"
                                   if verification.errored else f"rejected at {stage}"))
    raise typer.Exit(code=0 if verification.accepted else NO_VERDICT if verification.errored else 1)
