"""Which verification stages an authoring run runs, with which models, decided once before any
work and shown to the user (the run header of ``itemsmith author``, the author job's ``stages``
event and result, ``report.json``).

A run that names no judges (``AuthorConfig.judges is None``) gets the default panel of the
settings (``ITEMSMITH_DEFAULT_JUDGES``), one that names no students the default ladder
(``ITEMSMITH_DEFAULT_STUDENTS``); an empty list turns the stage off. A default local model that is
not installed is left out, and the stage says so; a model the run names itself is never left out
(building it fails with the install command). The capability filter needs students of at least two
ranks; with fewer the student stage still runs its blind check, and the filter is shown as off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.agents.config import AuthorConfig, restarts_broken
from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.providers import missing_credentials
from itemsmith.agents.llm.providers.local import missing_local_model
from itemsmith.agents.llm.spec import ModelSpec, ModelSpecField, StudentSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.judge_validation import advisory
from itemsmith.agents.stages.ladder_validation import advisory_ladder
from itemsmith.verification.block_replay import REPLAY_SOLVER
from itemsmith.verification.stage_configs import Outcome

__all__ = ["Pipeline", "StageInfo", "authoring_models", "check_models", "header_lines",
           "resolve_pipeline", "run_header"]

TITLES = {"structure": "structure", "audit": "item audit", "rederivation": "re-derivation", "judges": "judge panel", "students": "student pool",
          "capability": "capability filter", "custom": "custom stages"}


DROPPED = {Outcome.reversal: "expertise reversals"}


class StageInfo(BaseModel):
    """One verification stage of a run (`agents.stages.pipeline`): on (with its models) or off, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["structure", "audit", "rederivation", "judges", "students", "capability", "custom"]
    status: Literal["on", "off"]
    models: list[str] = Field(default_factory=list, description="judge specs, or students as SPEC@RANK")
    reason: str = Field(description="on: what it runs; off: why it is left out")
    left_out: list[str] = Field(default_factory=list, description="default models left out, each 'SPEC: why'")


class Pipeline(BaseModel):
    """The judges and students a run builds, and every stage as the header shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judges: list[ModelSpecField]
    students: list[StudentSpec]
    stages: list[StageInfo]
    solver: ModelSpecField | None = None  # the re-derivation solver's spec (None: off, or replay only)
    # no solver installed: the stage still re-derives items made by the building blocks, by trusted replay
    replay_only: bool = False
    advisory_judges: list[ModelSpecField] = []  # the panel's judges not validated: their scores decide nothing
    skipped_students: str | None = None  # an advisory ladder left out: why ("advisory/skipped, ...")


def check_models(pipeline: Pipeline, generator: ModelSpec | None, planner: ModelSpec | None,
                 settings: AgentSettings) -> None:
    """Every model the run will build can be built here (a local model's files and llama.cpp, a
    hosted provider's or an endpoint's key: `providers.missing_credentials`), checked at once and
    before any work; else one `ProviderConfigError` naming each role and what it lacks."""
    roles = [("generator", generator), ("planner", planner), ("solver", pipeline.solver),
             *(("judge", spec) for spec in pipeline.judges), *(("student", s.spec) for s in pipeline.students)]
    missing = dict.fromkeys(f"{role} {spec}: {why}" for role, spec in roles if spec is not None and (
        why := missing_local_model(spec) or missing_credentials(spec, settings)) is not None)
    if missing:
        raise ProviderConfigError("; ".join(missing))


def _available(specs: Sequence[ModelSpec], labels: Sequence[str]) -> tuple[list[ModelSpec], list[str]]:
    """The specs that can run here, and the others as 'LABEL: why'."""
    kept, left_out = [], []
    for spec, label in zip(specs, labels, strict=True):
        why = missing_local_model(spec)
        if why is None:
            kept.append(spec)
        else:
            left_out.append(f"{label}: {why}")
    return kept, left_out


def _off_reason(what: str, field: str, defaults_var: str, given: bool, left_out: list[str]) -> str:
    if given:
        return f"turned off (--no-{field}, or {field}: [])"
    if left_out:
        return f"no default {what} is installed"
    return f"no default {what} configured ({defaults_var} is empty)"


def _judge_stage(config: AuthorConfig, settings: AgentSettings) -> tuple[list[ModelSpec], StageInfo]:
    given = config.judges is not None
    defaults = settings.default_judges
    specs, left_out = (list(config.judges or []), []) if given else _available(defaults, [str(s) for s in defaults])
    if not specs:
        return [], StageInfo(name="judges", status="off", left_out=left_out,
                             reason=_off_reason("judge", "judges", "ITEMSMITH_DEFAULT_JUDGES", given, left_out))
    forms = {"local judges read their score distribution in one pass" if s.provider == "local"
             else "chat judges reason, then score" for s in specs}
    unvalidated = advisory(specs, settings)
    if unvalidated:
        whole = len(unvalidated) == len(specs)
        named = ", ".join(map(str, unvalidated))
        forms.add(("advisory panel" if whole else f"advisory: {named}") + f" (not validated at AUC >= "
                  f"{settings.min_judge_auc:g}: itemsmith judges validate)" + (": its scores decide nothing" if whole
                                                                                 else ""))
    return specs, StageInfo(name="judges", status="on", models=[str(s) for s in specs], left_out=left_out,
                            reason=("" if given else "default panel; ") + "; ".join(sorted(forms)))


def _student_stage(config: AuthorConfig, settings: AgentSettings
                   ) -> tuple[list[StudentSpec], StageInfo, str | None]:
    """The students that answer, the stage, and why an advisory ladder is skipped (None: not skipped)."""
    given = config.students is not None
    left_out: list[str] = []
    if given:
        students = list(config.students or [])
    else:
        defaults = settings.default_students
        kept, left_out = _available([s.spec for s in defaults], [str(s) for s in defaults])
        students = [s for s in defaults if s.spec in kept]
    if not students:
        return [], StageInfo(name="students", status="off", left_out=left_out,
                             reason=_off_reason("student", "students", "ITEMSMITH_DEFAULT_STUDENTS", given,
                                                left_out)), None
    why = advisory_ladder(students, settings)
    if why is not None and settings.advisory_students == "skip":
        skipped = f"advisory/skipped, {why}"
        return [], StageInfo(name="students", status="off", models=[str(s) for s in students], left_out=left_out,
                             reason=f"{skipped}; --run-advisory-students (ITEMSMITH_ADVISORY_STUDENTS=run) runs it"
                             ), skipped
    modes = {"by letter log-likelihood" if s.resolved_mode == "loglik" else "by chat" for s in students}
    blind = "with and without the series (blind condition)" if config.pool.blind else "with the series only"
    advised = "" if why is None else f"; advisory, run as asked (ITEMSMITH_ADVISORY_STUDENTS=run): {why}"
    return students, StageInfo(
        name="students", status="on", models=[str(s) for s in students], left_out=left_out,
        reason=("" if given else "default ladder; ") + f"answer {' and '.join(sorted(modes))}, {blind}{advised}"
    ), None


def _rederivation_stage(config: AuthorConfig, settings: AgentSettings) -> tuple[ModelSpec | None, StageInfo]:
    """The solver: the run's own (never left out; naming one turns the stage on), else the
    settings', else the generator (left out, with the reason, when it is a local model that is not
    installed: the stage then replays the building blocks' calls only, its model "trusted block replay")."""
    from itemsmith.verification.settings import VerificationSettings

    thresholds = VerificationSettings().rederivation
    enabled = config.rederivation if config.rederivation is not None else bool(config.solver) or thresholds.enabled
    if not enabled:
        off = "turned off (--no-rederivation)" if config.rederivation is False else "off by default " \
              "(ITEMSMITH_REDERIVATION_ENABLED=false)"
        return None, StageInfo(name="rederivation", status="off", reason=off)
    spec = config.solver or settings.solver or config.generator or settings.default_generator()
    why = None if config.solver else missing_local_model(spec)
    if why is not None:
        return None, StageInfo(name="rederivation", status="on", models=[REPLAY_SOLVER], left_out=[f"{spec}: {why}"],
                               reason="the default solver is not installed: items made by the building blocks are "
                                      "re-derived by replaying their calls in trusted code, other templates are not "
                                      "re-derived")
    flag = ("flagged" if thresholds.on_not_rederivable == "flag" else "rejected")
    return spec, StageInfo(name="rederivation", status="on", models=[str(spec)],
                           reason=f"writes solve(item) from one item (no source, no key), run over fresh draws; "
                                  f"not re-derivable: {flag}")


def _replay_only(stage: StageInfo) -> bool:
    return stage.models == [REPLAY_SOLVER]


def _capability_stage(config: AuthorConfig, students: Sequence[StudentSpec], skipped: bool) -> StageInfo:
    ranks = sorted({s.rank for s in students})
    if not students:
        return StageInfo(name="capability", status="off",
                         reason="the student ladder is advisory (skipped)" if skipped else "no student pool")
    if len(ranks) < 2:
        return StageInfo(name="capability", status="off",
                         reason=f"needs students of at least 2 different ranks, the pool has rank {ranks[0]} only"
                                + (" (its blind check still runs)" if config.pool.blind else ""))
    drops = [DROPPED.get(outcome, f"{outcome.value!r} outcomes")
             for outcome, keep in config.capability.keep.items() if not keep]
    if config.capability.reject_blind and config.pool.blind:
        drops.append("blind-answerable templates")
    return StageInfo(name="capability", status="on", reason=f"accuracy against rank {' < '.join(map(str, ranks))}; "
                                                            f"drops {' and '.join(drops) or 'nothing'}")


def resolve_pipeline(config: AuthorConfig, settings: AgentSettings, *, custom: Sequence[str] = ()) -> Pipeline:
    """The stages `config` runs on this machine. `custom` names verifiers a caller passes instead of
    the judges and students (then `config` must name none)."""
    stages = [StageInfo(name="structure", status="on",
                        reason=f"in the sandbox, {config.sandbox_workers} worker(s), up to {config.rounds} "
                               "round(s) per slot"),
              StageInfo(name="audit", status="on", reason="blind solvers and item checks, no model")]
    if custom:
        if config.judges or config.students:
            raise ProviderConfigError("pass verifiers or configure judges/students, not both")
        replaced = "replaced by the caller's verifiers"
        solver, rederivation_stage = _rederivation_stage(config, settings)
        return Pipeline(judges=[], students=[], solver=solver, replay_only=_replay_only(rederivation_stage), stages=[
            *stages, rederivation_stage, StageInfo(name="custom", status="on", models=list(custom), reason="verifiers given by the caller"),
            *(StageInfo(name=name, status="off", reason=replaced) for name in ("judges", "students", "capability"))])
    solver, rederivation_stage = _rederivation_stage(config, settings)
    judges, judge_stage = _judge_stage(config, settings)
    students, student_stage, skipped = _student_stage(config, settings)
    return Pipeline(judges=judges, students=students, solver=solver, replay_only=_replay_only(rederivation_stage),
                    advisory_judges=advisory(judges, settings), skipped_students=skipped,
                    stages=[*stages, rederivation_stage, judge_stage, student_stage,
                            _capability_stage(config, students, skipped is not None)])


def header_lines(stages: Sequence[StageInfo]) -> list[str]:
    """The stages as the run header prints them: one line each, then the models left out."""
    lines = ["stages:"]
    for stage in stages:
        title = f"  {TITLES[stage.name]:<18}"
        models = f"{', '.join(stage.models)}; " if stage.models else ""
        lines.append(f"{title}off: {stage.reason}" if stage.status == "off" else f"{title}on: {models}{stage.reason}")
        lines += [f"  {'':<18}left out: {why}" for why in stage.left_out]
    return lines


def authoring_models(config: AuthorConfig, settings: AgentSettings) -> tuple[ModelSpec, ModelSpec]:
    """The generator's and the planner's specs: as configured, else the settings' defaults."""
    generator = config.generator or settings.default_generator()
    return generator, config.planner or settings.planner or generator


def run_header(config: AuthorConfig, settings: AgentSettings, pipeline: Pipeline) -> list[str]:
    """What a run will do, before it starts: its generator and planner, then `header_lines`."""
    generator, planner = authoring_models(config, settings)
    restart = ("; code that does not run is not refined: the next round restarts without the curated example"
               if restarts_broken(config.restart_broken, generator.provider) else "")
    return [f"generator: {generator}" + ("" if planner == generator else f", planner: {planner}") + restart,
            *header_lines(pipeline.stages)]
