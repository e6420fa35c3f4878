"""Release operations that call models, shared by the command line and the jobs: re-verification
with a new panel, evaluation of a model (in full or adaptively) and calibration. Models come from `agents.llm.factory`, so both entry
points name models, retry and score local models the same way; specs come parsed (`agents.llm.spec`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlalchemy.orm import Session

from itemsmith.agents.llm.factory import CallLog, build_judges, build_respondent, build_students, retry_policy
from itemsmith.agents.llm.providers import SpecPolicy
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.agents.stages.judge_validation import advisory
from itemsmith.items.rendering import TextFormat
from itemsmith.items.schema import IRTParameters
from itemsmith.sandbox import SandboxLimits
from itemsmith.templates_bank.adaptive import AdaptiveConfig, AdaptiveReport, adaptive_evaluate_release
from itemsmith.templates_bank.evaluation import EvaluationReport, EvaluationStore, evaluate_release
from itemsmith.templates_bank.releases import Release
from itemsmith.templates_bank.reverification import ReverificationReport, reverify_release

__all__ = ["evaluate", "evaluate_adaptive", "reverify"]


def reverify(session: Session, release: Release, *, judges: Sequence[ModelSpec], students: Sequence[StudentSpec] = (),
             run_id: str | None = None, workers: int = 1, settings: AgentSettings | None = None,
             policy: SpecPolicy | None = None, limits: SandboxLimits | None = None) -> ReverificationReport:
    """Judge `release` again with the `judges` panel (and `students`); committed after each
    template, so answers already paid for survive a failure and are reused by a rerun. A panel with
    no validated judge is advisory: its scores are stored, its decisions change nothing."""
    settings = settings or get_settings()
    log, retry = CallLog(), retry_policy(settings)
    panel = [judge.bind(log, retry) for judge in build_judges(judges, settings=settings, policy=policy)]
    pool = [student.bind(log, retry) for student in build_students(students, settings=settings, policy=policy)]
    report = reverify_release(session, release, panel, students=pool, run_id=run_id, workers=workers,
                              limits=limits, commit=True, advisory=len(advisory(judges, settings)) == len(judges))
    return report.model_copy(update={"usage": log.ledger.totals().counts()})


def evaluate(release: Release, *, model: ModelSpec, formats: Sequence[TextFormat] = (TextFormat.plain,),
             fresh_seed: int | None = None, concurrency: int = 4, decimals: int = 2, workers: int = 1,
             store: EvaluationStore | None = None, parameters: Mapping[str, IRTParameters] | None = None,
             settings: AgentSettings | None = None, policy: SpecPolicy | None = None,
             limits: SandboxLimits | None = None,
             on_progress: Callable[[int, int], None] | None = None) -> EvaluationReport:
    """Evaluate `model` on `release` (its ability on ``parameters``, e.g. the bank's current
    calibration). A call that still fails after the bounded retries raises: a failed call is never
    scored as a wrong answer (with a ``store``, the answers so far are kept for a resumed run).
    ``on_progress(answered, total)`` follows the answers."""
    settings = settings or get_settings()
    respondent = build_respondent(model, settings=settings, decimals=decimals, policy=policy)
    log = CallLog()
    student = respondent.bind(log, retry_policy(settings), strict=True)
    limit = min(concurrency, respondent.max_concurrency or concurrency)
    report = evaluate_release(release, student, formats=formats, fresh_seed=fresh_seed, max_concurrency=limit,
                              workers=workers, store=store, parameters=parameters, limits=limits,
                              on_progress=on_progress)
    return report.model_copy(update={"usage": log.ledger.totals().counts()})


def evaluate_adaptive(release: Release, *, model: ModelSpec, parameters: Mapping[str, IRTParameters],
                      config: AdaptiveConfig | None = None, text_format: TextFormat = TextFormat.plain,
                      decimals: int = 2, store: EvaluationStore | None = None, settings: AgentSettings | None = None,
                      policy: SpecPolicy | None = None, limits: SandboxLimits | None = None) -> AdaptiveReport:
    """Evaluate `model` adaptively on `release`'s calibrated templates (``parameters``), one fresh
    instance per pick, until the SE target or the item budget (`templates_bank.adaptive`)."""
    settings = settings or get_settings()
    respondent = build_respondent(model, settings=settings, decimals=decimals, policy=policy)
    log = CallLog()
    student = respondent.bind(log, retry_policy(settings), strict=True)
    report = adaptive_evaluate_release(release, student, parameters, config=config, text_format=text_format,
                                       store=store, limits=limits)
    return report.model_copy(update={"usage": log.ledger.totals().counts()})
