"""Calibration in the bank: the template-level 2PL (`verification.irt.fit_2pl`) fitted to every
stored response to a set of template versions, written back as ``irt`` verdicts.

Respondents are the student pool's answers from authoring and re-verification (with the series
shown; blind answers are a different question) and every evaluated model's answers
(``evaluation_responses``). A respondent is named by its model name as stored; every instance a
respondent answered counts once (the same item under the same prompt answered twice, e.g. copied
by a cache, is one observation, the newest kept).

Each calibration writes one new `IRTParameters` verdict per template version (model
``itemsmith-2pl``, the calibration's id as run id), so the history stays and the newest verdict
is the current calibration (`current_parameters`; a new release pins it in its manifest). A
template whose observed information did not invert (NaN standard errors) gets no verdict and is
listed as such. Templates whose discrimination is negative (score test) or near zero are marked
for review: likely mis-keyed, or not measuring what the rest measures.

Too few respondents: below ``min_respondents`` distinct respondents `TooFewRespondentsError`
says how many there are and how many are needed, unless ``priors`` is set: the fit then rests
mostly on the priors, and the report says so.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.items.schema import IRTParameters
from itemsmith.templates_bank.evaluation import release_versions
from itemsmith.templates_bank.releases import Release
from itemsmith.templates_bank.storage import (
    EvaluationResponseRow,
    StudentResponseRow,
    VerdictRow,
    record_verdict,
    releasable_versions,
)
from itemsmith.verification.irt import IRTConfig, fit_2pl

__all__ = ["CALIBRATION_MODEL", "REVIEW_FLAGS", "CalibratedTemplate", "CalibrationError", "CalibrationOptions",
           "CalibrationReport", "RespondentAbility", "TooFewRespondentsError", "calibrate_release",
           "FlaggedTemplate", "calibrate_versions", "calibration_on_record", "current_parameters", "flagged_templates", "new_calibration_id", "refresh_calibration", "stored_responses"]

CALIBRATION_MODEL = "itemsmith-2pl"
REVIEW_FLAGS = ("negative_discrimination", "near_zero_discrimination")


class CalibrationError(RuntimeError):
    """The templates cannot be calibrated as asked."""


class TooFewRespondentsError(CalibrationError):
    """Fewer distinct respondents than the calibration needs."""

    def __init__(self, found: int, needed: int, what: str) -> None:
        super().__init__(f"{what}: {found} respondent(s) answered its templates; calibration needs at least "
                         f"{needed} (add students or evaluate {needed - found} more model(s)), or fit anyway "
                         "with the priors carrying most of the weight (--priors / \"priors\": true)")
        self.found, self.needed = found, needed


class CalibrationOptions(BaseModel):
    """How many respondents a fit needs, whether to fit below that on the priors, the 2PL's settings."""

    model_config = ConfigDict(extra="forbid")

    min_respondents: int = Field(5, ge=2, le=1000, description="distinct respondents a fit needs")
    priors: bool = Field(False, description="fit even with fewer respondents (mostly prior)")
    irt: IRTConfig = Field(default_factory=IRTConfig)


class CalibratedTemplate(BaseModel):
    template_id: str
    version_id: int
    discrimination: float
    difficulty: float
    discrimination_se: float | None = Field(description="None: the observed information did not invert")
    difficulty_se: float | None
    slope_z: float | None = Field(description="score test of a zero slope (negative: abler respondents do worse)")
    n_respondents: int
    n_responses: int
    proportion_correct: float
    flags: list[str]
    needs_review: bool = Field(description="negative or near-zero discrimination: likely mis-keyed")
    stored: bool = Field(description="an irt verdict was written")


class RespondentAbility(BaseModel):
    respondent: str
    ability: float
    se: float
    n_responses: int


class CalibrationReport(BaseModel):
    """One calibration: per-template parameters, the respondents' abilities, what needs review."""

    calibration_id: str
    what: str = Field(description="the release (BANK@N) or bank calibrated")
    respondents: list[RespondentAbility]
    templates: list[CalibratedTemplate]
    uncalibrated: list[str] = Field(description="templates no respondent answered")
    needs_review: list[str] = Field(description="templates flagged with negative or near-zero discrimination")
    min_respondents: int
    below_minimum: bool = Field(description="fitted on the priors with fewer respondents than min_respondents")
    converged: bool
    iterations: int


def new_calibration_id() -> str:
    return f"calibration-{uuid.uuid4().hex[:12]}"


def stored_responses(session: Session, versions: Mapping[str, int]) -> pd.DataFrame:
    """Every stored answer to the versions (template id -> version id): columns ``template_id``,
    ``student``, ``instance``, ``correct``, ``source`` (``pool`` or ``evaluation``)."""
    by_version = {version_id: template_id for template_id, version_id in versions.items()}
    ids = list(by_version)
    pool = session.execute(
        select(StudentResponseRow.template_version_id, StudentResponseRow.model, StudentResponseRow.item_hash,
               StudentResponseRow.prompt_hash, StudentResponseRow.correct)
        .where(StudentResponseRow.template_version_id.in_(ids), StudentResponseRow.blind.is_(False))
        .order_by(StudentResponseRow.id))
    evaluated = session.execute(
        select(EvaluationResponseRow.template_version_id, EvaluationResponseRow.model, EvaluationResponseRow.item_hash,
               EvaluationResponseRow.text_format, EvaluationResponseRow.prompt_hash, EvaluationResponseRow.correct)
        .where(EvaluationResponseRow.template_version_id.in_(ids)).order_by(EvaluationResponseRow.id))
    # One answer per (item, prompt): the prompt hash covers the rendering, so a model that answered the
    # same prompt in the pool and in an evaluation counts once. Without a prompt hash, the source and
    # format tell the answers apart.
    rows = [(by_version[v], model, f"{item}:{prompt}" if prompt else f"pool:{item}", bool(correct), "pool")
            for v, model, item, prompt, correct in pool]
    rows += [(by_version[v], model, f"{item}:{prompt}" if prompt else f"evaluation:{item}:{fmt}", bool(correct),
              "evaluation") for v, model, item, fmt, prompt, correct in evaluated]
    frame = pd.DataFrame(rows, columns=["template_id", "student", "instance", "correct", "source"])
    return frame.drop_duplicates(["template_id", "student", "instance"], keep="last").reset_index(drop=True)


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def calibrate_versions(session: Session, versions: Mapping[str, int], what: str,
                       options: CalibrationOptions | None = None, *, calibration_id: str | None = None,
                       commit: bool = False) -> CalibrationReport:
    """Fit the 2PL to every stored response to the versions (template id -> version id) and
    write one ``irt`` verdict per version. Raises `TooFewRespondentsError` (see the module
    docstring) or `CalibrationError` when nothing was answered."""
    options = options or CalibrationOptions()
    calibration_id = calibration_id or new_calibration_id()
    responses = stored_responses(session, versions)
    if responses.empty:
        raise CalibrationError(f"{what}: no stored answers to its templates yet (author with a student pool, "
                               "re-verify with students, or evaluate models on it first)")
    respondents = responses["student"].nunique()
    below = respondents < options.min_respondents
    if below and not options.priors:
        raise TooFewRespondentsError(respondents, options.min_respondents, what)
    fit = fit_2pl(responses[["template_id", "student", "instance", "correct"]], options.irt)
    templates: list[CalibratedTemplate] = []
    for template_id, row in fit.templates.iterrows():
        se_a, se_b = _finite(row["discrimination_se"]), _finite(row["difficulty_se"])
        flags = list(row["flags"])
        stored = se_a is not None and se_b is not None
        if stored:
            record_verdict(session, versions[str(template_id)],
                           IRTParameters(discrimination=float(row["discrimination"]), difficulty=float(row["difficulty"]),
                                         discrimination_se=se_a, difficulty_se=se_b, flags=flags),
                           model=CALIBRATION_MODEL, run_id=calibration_id)
        templates.append(CalibratedTemplate(
            template_id=str(template_id), version_id=versions[str(template_id)],
            discrimination=float(row["discrimination"]), difficulty=float(row["difficulty"]),
            discrimination_se=se_a, difficulty_se=se_b, slope_z=_finite(row["slope_z"]),
            n_respondents=int(row["n_students"]), n_responses=int(row["n_responses"]),
            proportion_correct=float(row["proportion_correct"]), flags=flags,
            needs_review=any(flag in REVIEW_FLAGS for flag in flags), stored=stored))
    if commit:
        session.commit()
    order = {template_id: i for i, template_id in enumerate(versions)}
    templates.sort(key=lambda t: order[t.template_id])
    abilities = [RespondentAbility(respondent=str(name), ability=float(r["ability"]), se=float(r["ability_se"]),
                                   n_responses=int(r["n_responses"]))
                 for name, r in fit.abilities.sort_values("ability", ascending=False).iterrows()]
    return CalibrationReport(
        calibration_id=calibration_id, what=what, respondents=abilities, templates=templates,
        uncalibrated=[t for t in versions if t not in set(fit.templates.index)],
        needs_review=[t.template_id for t in templates if t.needs_review], min_respondents=options.min_respondents,
        below_minimum=below, converged=fit.converged, iterations=fit.iterations)


def calibrate_release(session: Session, release: Release, options: CalibrationOptions | None = None, *,
                      calibration_id: str | None = None, commit: bool = False) -> CalibrationReport:
    """`calibrate_versions` on the release's template versions."""
    return calibrate_versions(session, release_versions(session, release), release.manifest.ref, options,
                              calibration_id=calibration_id, commit=commit)


def calibration_on_record(session: Session, calibration_id: str) -> int:
    """irt verdicts the calibration ``calibration_id`` stored (0: it has not run), so a rerun of a
    job or an import does not calibrate twice."""
    return len(session.scalars(select(VerdictRow.id).where(VerdictRow.run_id == calibration_id,
                                                           VerdictRow.stage == "irt")).all())


class FlaggedTemplate(BaseModel):
    """A template whose current calibration marks it for review."""

    template_id: str
    version_id: int
    flags: list[str]


def flagged_templates(session: Session, bank_id: int) -> list[FlaggedTemplate]:
    """The bank's releasable templates whose newest ``irt`` verdict has a review flag (negative or
    near-zero discrimination: likely mis-keyed)."""
    versions = {v.id: v.template_key for v in releasable_versions(session, bank_id)}
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                           .where(VerdictRow.template_version_id.in_(list(versions)), VerdictRow.stage == "irt")
                           .order_by(VerdictRow.id))
    newest = {version_id: payload.get("flags", []) for version_id, payload in rows}
    return [FlaggedTemplate(template_id=versions[v], version_id=v, flags=flags) for v, flags in newest.items()
            if any(flag in REVIEW_FLAGS for flag in flags)]


def current_parameters(session: Session, release: Release) -> dict[str, IRTParameters]:
    """Each template's newest ``irt`` verdict in the bank, else the parameters its release pinned."""
    versions = release_versions(session, release)
    by_version = {version_id: template_id for template_id, version_id in versions.items()}
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                           .where(VerdictRow.template_version_id.in_(list(by_version)), VerdictRow.stage == "irt")
                           .order_by(VerdictRow.id))
    newest = {by_version[v]: IRTParameters.model_validate(payload) for v, payload in rows}
    pinned = {t.template_id: t.irt for t in release.manifest.templates if t.irt is not None}
    return {**pinned, **newest}


def refresh_calibration(session: Session, release: Release, evaluation_id: str, respondent: str,
                        options: CalibrationOptions | None = None, *,
                        commit: bool = False) -> CalibrationReport | str:
    """After an evaluation stored its answers: recalibrate the release (a new verdict, history kept)
    when its model is a new respondent (no answer of it to these templates outside this
    evaluation). Returns the calibration, or why none was made."""
    options = (options or CalibrationOptions()).model_copy(update={"priors": False})
    versions = release_versions(session, release)
    ids = list(versions.values())
    elsewhere = session.scalar(select(EvaluationResponseRow.id).where(
        EvaluationResponseRow.template_version_id.in_(ids), EvaluationResponseRow.model == respondent,
        EvaluationResponseRow.evaluation_id != evaluation_id).limit(1))
    pooled = session.scalar(select(StudentResponseRow.id).where(
        StudentResponseRow.template_version_id.in_(ids), StudentResponseRow.model == respondent).limit(1))
    if elsewhere is not None or pooled is not None:
        return f"not recalibrated: {respondent} had answered these templates before"
    try:
        return calibrate_versions(session, versions, release.manifest.ref, options, commit=commit)
    except CalibrationError as exc:
        return f"not recalibrated: {exc}"
