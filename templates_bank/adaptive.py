"""Adaptive evaluation of one model on a calibrated release (computerized adaptive testing, as
Fluid Benchmarking does with a 2PL and Fisher information, on fresh instances).

The loop (`run_adaptive`): start from the N(0, 1) ability prior; pick the next template by its
Fisher information at the current EAP ability among the templates not yet used ``max_uses``
times, at random among the most informative few (exposure control: a fixed "best first item"
would be shown to every model); put one instance of it to the model; update the ability
posterior (`verification.irt.AbilityPosterior`); stop when the posterior SD reaches
``target_se``, after ``max_items`` items, or when no template is left.

Exposure control is the 5-4-3-2-1 method by default (``exposure="shrinking"``): the first pick
is random among the ``top_k`` most informative, the second among ``top_k - 1``, and so on down to
the single best. Every model starts at the same ability, so the first picks are where a fixed
order would repeat; later picks already differ with the answers. ``exposure="randomesque"``
draws among ``top_k`` at every pick (more spread, more items: docs/calibration.md).

On a release (`adaptive_evaluate_release`), every pick is a fresh instance: the template runs
in the sandbox on a new seed (none of the release's seeds, drawn deterministically from the
run's seed) and one of its items, chosen at random, is asked. Answers go to the bank like a
full evaluation's (`evaluation.EvaluationStore`, marked adaptive), so an interrupted run resumed
with the same id and seed replays the stored answers and asks only what is missing. The report
gives the ability +- SE, the accuracy predicted on the whole release (the 2PL averaged over the
ability posterior, templates weighted by their items), the items used and the trajectory.

The IRT numerics, the sandbox and the students are imported by the functions that use them: job
requests and the API read `AdaptiveConfig` at start-up, which needs none of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.rendering import TextFormat
from itemsmith.items.schema import IRTParameters

if TYPE_CHECKING:
    from itemsmith.sandbox import SandboxLimits
    from itemsmith.templates_bank.evaluation import EvaluationStore
    from itemsmith.templates_bank.releases import Release
    from itemsmith.verification.students import Student

__all__ = ["AdaptiveConfig", "AdaptiveReport", "AdaptiveResult", "AdaptiveStep", "Administered", "CalibratedItem",
           "adaptive_evaluate_release", "adaptive_table", "next_template", "run_adaptive"]

StopReason = Literal["target_se", "max_items", "exhausted"]


class AdaptiveConfig(BaseModel):
    """When to stop, how to pick, and the seed of the picks and of the fresh instances."""

    model_config = ConfigDict(extra="forbid")

    target_se: float = Field(0.3, gt=0, description="stop once the ability's posterior SD is at most this")
    max_items: int = Field(50, ge=1, le=10_000, description="stop after this many items")
    top_k: int = Field(5, ge=1, description="exposure control: pick at random among the k most informative")
    exposure: Literal["shrinking", "randomesque"] = Field(
        "shrinking", description="shrinking: the n-th pick among max(top_k - n + 1, 1) (the 5-4-3-2-1 method); "
                                 "randomesque: among top_k at every pick")
    max_uses: int = Field(3, ge=1, description="fresh instances of one template at most (a small bank needs "
                                               "repeats; a template's instances are exchangeable)")
    seed: int = Field(0, ge=0, description="seed of the picks and of the fresh instances' seeds")


@dataclass(frozen=True)
class CalibratedItem:
    """A template the loop may pick: its 2PL parameters and its weight in the full release (items)."""

    template_id: str
    discrimination: float
    difficulty: float
    weight: float = 1.0


@dataclass(frozen=True)
class Administered:
    """One answered instance: whether it was right, and which instance it was (when known)."""

    correct: bool
    seed: int | None = None
    item_index: int | None = None


class AdaptiveStep(BaseModel):
    step: int = Field(description="1-based")
    template_id: str
    seed: int | None
    item_index: int | None
    information: float = Field(description="Fisher information of the template at the ability before the answer")
    correct: bool
    theta: float = Field(description="EAP ability after the answer")
    se: float


class AdaptiveResult(BaseModel):
    """Ability +- SE, the predicted full-release accuracy, items used, why it stopped, every step."""

    theta: float
    se: float
    predicted_accuracy: float
    items_used: int
    stopped: StopReason
    trajectory: list[AdaptiveStep]


def next_template(theta: float, items: Sequence[CalibratedItem], uses: np.ndarray, config: AdaptiveConfig,
                  rng: np.random.Generator) -> int | None:
    """Index of the next template: random among the most informative at ``theta`` that are used
    fewer than ``max_uses`` times (``top_k`` of them, fewer with each pick when the exposure
    control is shrinking: ``uses`` counts the picks so far); None when none is left."""
    from itemsmith.verification.irt import fisher_information

    available = np.flatnonzero(uses < config.max_uses)
    if available.size == 0:
        return None
    a = np.array([items[i].discrimination for i in available])
    b = np.array([items[i].difficulty for i in available])
    information = fisher_information(theta, a, b)
    k = config.top_k if config.exposure == "randomesque" else max(config.top_k - int(uses.sum()), 1)
    best = available[np.argsort(-information, kind="stable")[:k]]
    return int(rng.choice(best))


def run_adaptive(items: Sequence[CalibratedItem], respond: Callable[[int, int], Administered],
                 config: AdaptiveConfig | None = None) -> AdaptiveResult:
    """The adaptive loop; ``respond(template_index, use)`` puts one (fresh) instance of a template
    to the respondent (``use`` counts from 0 per template)."""
    from itemsmith.verification.irt import AbilityPosterior, expected_accuracy, fisher_information

    config = config or AdaptiveConfig()
    if not items:
        raise ValueError("no calibrated templates to test with")
    rng = np.random.default_rng(config.seed)
    posterior = AbilityPosterior()
    uses = np.zeros(len(items), dtype=int)
    trajectory: list[AdaptiveStep] = []
    stopped: StopReason = "max_items"
    while True:
        if posterior.sd <= config.target_se:
            stopped = "target_se"
            break
        if len(trajectory) >= config.max_items:
            stopped = "max_items"
            break
        theta = posterior.mean
        pick = next_template(theta, items, uses, config, rng)
        if pick is None:
            stopped = "exhausted"
            break
        item = items[pick]
        information = float(fisher_information(theta, np.array([item.discrimination]), np.array([item.difficulty]))[0])
        answer = respond(pick, int(uses[pick]))
        uses[pick] += 1
        posterior.update(item.discrimination, item.difficulty, answer.correct)
        trajectory.append(AdaptiveStep(step=len(trajectory) + 1, template_id=item.template_id, seed=answer.seed,
                                       item_index=answer.item_index, information=information, correct=answer.correct,
                                       theta=posterior.mean, se=posterior.sd))
    theta, se = posterior.mean, posterior.sd
    predicted = expected_accuracy(theta, se, np.array([i.discrimination for i in items]),
                                  np.array([i.difficulty for i in items]), np.array([i.weight for i in items]))
    return AdaptiveResult(theta=theta, se=se, predicted_accuracy=predicted, items_used=len(trajectory),
                          stopped=stopped, trajectory=trajectory)


# --- on a release -----------------------------------------------------------------------------


class AdaptiveReport(AdaptiveResult):
    """An adaptive evaluation of one model on a release."""

    model_config = ConfigDict(extra="forbid")

    release: str
    release_checksum: str
    model: str
    evaluation_id: str | None
    text_format: TextFormat
    config: AdaptiveConfig
    release_items: int = Field(description="items a full evaluation of the release asks")
    templates_without_irt: list[str] = Field(description="not calibrated: never picked")
    reused_answers: int = 0
    usage: dict[str, float | int | None] = Field(
        default_factory=dict, description="the calls by outcome, their tokens (cached apart) and cost, from the "
                                          "caller that metered them")


def adaptive_evaluate_release(release: Release, student: Student, parameters: Mapping[str, IRTParameters], *,
                              config: AdaptiveConfig | None = None, text_format: TextFormat = TextFormat.plain,
                              store: EvaluationStore | None = None,
                              limits: SandboxLimits | None = None) -> AdaptiveReport:
    """Evaluate the student adaptively on the release's calibrated templates (``parameters`` by
    template id, e.g. `calibration.current_parameters`), one fresh instance per pick."""
    from itemsmith.templates_bank.evaluation import fresh_seeds
    from itemsmith.templates_bank.regeneration import TemplateRun, regenerate
    from itemsmith.verification.samples import TemplateSample
    from itemsmith.verification.students import PoolConfig, Student, aanswer_template

    config = config or AdaptiveConfig()
    release.refuse_fresh_instances("adaptive evaluation (every pick is a fresh instance)")
    manifest = release.manifest
    entries = {t.template_id: t for t in manifest.templates}
    items = [CalibratedItem(t.template_id, parameters[t.template_id].discrimination,
                            parameters[t.template_id].difficulty, float(t.items))
             for t in manifest.templates if t.template_id in parameters]
    if not items:
        raise ValueError(f"{manifest.ref}: no template is calibrated; run `itemsmith release calibrate "
                         f"{manifest.ref}` first")
    used_seeds = {s for t in manifest.templates for s in t.seeds}
    seeds = fresh_seeds(used_seeds, config.max_items, config.seed)
    rng = np.random.default_rng([config.seed, 1])  # which item of a fresh run is asked
    answering = Student(student.config.model_copy(update={"text_format": text_format}), student.model)
    pool = PoolConfig(blind=False, max_concurrency=1)
    step = 0
    # one event loop for the whole run: a hosted client made on the first loop is reused by every pick
    # (a loop per pick closed the loop that client's connections belong to: "Event loop is closed")
    runner = asyncio.Runner()

    def respond(index: int, use: int) -> Administered:
        nonlocal step
        entry = entries[items[index].template_id]
        seed = seeds[step]
        step += 1
        run = TemplateRun(template_id=entry.template_id, source=release.sources[entry.version],
                          handler=release.local_handler(entry),
                          seeds=(seed,), num_samples=entry.num_samples)
        fresh = next(iter(regenerate([run], limits=limits))).items
        item_index = int(rng.integers(len(fresh)))
        item = fresh[item_index]
        if store is not None:
            store.expect(item, seed, item_index)
        report = runner.run(aanswer_template(TemplateSample(template_id=entry.template_id, items=[item]),
                                             [answering], pool, cache=store))
        if not report.responses:  # a call with no usable reply is never an answer
            failed = report.failed[0].error if report.failed else "no response"
            raise RuntimeError(f"{entry.template_id}: the model gave no usable reply: {failed}")
        return Administered(correct=report.responses[0].correct, seed=seed, item_index=item_index)

    with runner:
        result = run_adaptive(items, respond, config)
    return AdaptiveReport(
        **result.model_dump(), release=manifest.ref, release_checksum=manifest.checksum,
        model=student.config.model or student.config.name,
        evaluation_id=store.evaluation_id if store is not None else None, text_format=text_format, config=config,
        release_items=manifest.counts.items, templates_without_irt=sorted(set(entries) - set(parameters)),
        reused_answers=store.reused if store is not None else 0)


def adaptive_table(report: AdaptiveReport) -> str:
    """The report as plain text."""
    lines = [f"{report.model} on {report.release} (adaptive, fresh instances, format {report.text_format.value})",
             f"ability {report.theta:+.3f} +- {report.se:.3f} (SE); predicted accuracy on the full release "
             f"{report.predicted_accuracy:.3f}",
             f"items used: {report.items_used} (the full release has {report.release_items}); stopped: "
             f"{report.stopped.replace('_', ' ')} (target SE {report.config.target_se}, at most "
             f"{report.config.max_items} items)"]
    if report.evaluation_id is not None:
        lines.append(f"stored as evaluation {report.evaluation_id} ({report.reused_answers} answers reused)")
    if report.templates_without_irt:
        lines.append(f"not calibrated, never picked: {', '.join(report.templates_without_irt)}")
    lines += ["", f"{'step':>4}  {'template':40} {'info':>6}  {'ok':>2}  {'theta':>7}  {'se':>6}"]
    lines += [f"{s.step:4d}  {s.template_id:40} {s.information:6.3f}  {'y' if s.correct else 'n':>2}  "
              f"{s.theta:+7.3f}  {s.se:6.3f}" for s in report.trajectory]
    return "\n".join(lines)
