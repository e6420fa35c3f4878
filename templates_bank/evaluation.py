"""Evaluate one model on a release: accuracy overall, per category, per dataset (the shape of
TimeSeriesExamAgent's main table, with the random-guess baseline of each group), the performance factors of
Fons et al. (text format, series length, position of the queried point) and the model's IRT ability.

Items come from the release exactly (`Release.items`: as stored, checked against the manifest) or, with a
``fresh_seed``, from the same templates run on seeds the release never used: new instances of
the same questions, so a model that memorised the published items gains nothing (the answer to
benchmark contamination). The seeds are derived from ``fresh_seed`` and recorded in the report.

The model answers as a student of `verification.students` (chat replies parsed to one letter, or
letter log-likelihoods), once per item per text format; an unparsed reply counts as wrong and is
counted. Every response is kept in the report.

Factors read from the items, never guessed:

- series length: points of the item's longest channel, in buckets (`LENGTH_BUCKETS`); items
  without a series are ``"no series"``.
- position of the queried point: where an item's metadata names one point of its series (a
  sample index, or a timestamp found in a channel; `QUERIED_POINT_KEYS`), its quarter of the
  series, ``Q1`` to ``Q4`` (Fons et al. reports position bias by quadrant); ``"n/a"`` otherwise.

Ability: EAP on the calibration's scale (`verification.irt.estimate_ability`) from the responses
to templates with IRT parameters (the caller's, e.g. the bank's current calibration from
`templates_bank.calibration.current_parameters`, else those pinned in the release manifest), one
estimate per text format (formats are a factor, so they are not pooled); templates without
parameters are listed, not guessed.

Stored and resumable: with an `EvaluationStore` every answer is written to the bank
(``evaluation_responses``, committed one by one) under the evaluation's id as it arrives, so
calibration can read it; an evaluation that stops half way (a model error, a crash) is resumed by
running it again with the same id: stored answers are reused, only the missing ones are asked,
and a report exists only once every item has an answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from itemsmith.items.hashing import canonical_json, item_hash, sha256_hex
from itemsmith.items.rendering import TextFormat
from itemsmith.items.schema import IRTParameters, Item, StudentResponse
from itemsmith.sandbox import SandboxLimits
from itemsmith.templates_bank.handler_identity import handler_label
from itemsmith.templates_bank.regeneration import TemplateRun, regenerate
from itemsmith.templates_bank.releases import Release, ReleaseTemplate
from itemsmith.templates_bank.storage import (
    EvaluationResponseCreate,
    find_version,
    get_bank,
    list_evaluation_responses,
    record_evaluation_response,
)
from itemsmith.verification.irt import estimate_ability
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import PoolConfig, Student, StudentCall, aanswer_templates

__all__ = [
    "LENGTH_BUCKETS", "NOT_APPLICABLE", "NO_SERIES", "QUERIED_POINT_KEYS", "AbilityEstimate", "EvaluationReport",
    "EvaluationStore", "GroupAccuracy", "ItemResponse", "ReleaseItems", "TemplateItems", "aevaluate", "evaluate", "evaluate_release",
    "fresh_seeds", "length_bucket", "position_bucket", "release_items", "release_versions", "report_table",
    "series_length",
]

LENGTH_BUCKETS = (50, 100, 200, 500, 1000)  # upper edges; longer series fall in ">1000"
NO_SERIES = "no series"
NOT_APPLICABLE = "n/a"
_QUARTERS = ("Q1", "Q2", "Q3", "Q4")


# --- the factors of one item -------------------------------------------------------------------


def series_length(item: Item) -> int | None:
    """Points of the item's longest channel; None without a series."""
    return max((len(s.values) for s in item.series), default=None)


def length_bucket(length: int | None) -> str:
    """``"1-50"``, ``"51-100"``, ... ``">1000"``, or ``"no series"``."""
    if length is None:
        return NO_SERIES
    low = 1
    for high in LENGTH_BUCKETS:
        if length <= high:
            return f"{low}-{high}"
        low = high + 1
    return f">{LENGTH_BUCKETS[-1]}"


def _at_index(item: Item, value: Any) -> tuple[int, int] | None:
    length = series_length(item)
    if isinstance(value, int) and not isinstance(value, bool) and length is not None and 0 <= value < length:
        return value, length
    return None


def _at_timestamp(item: Item, value: Any) -> tuple[int, int] | None:
    for channel in item.series:
        if channel.timestamps is not None and value in channel.timestamps:
            return channel.timestamps.index(value), len(channel.values)
    return None


# metadata key -> how its value locates the queried point as (index, series length); first key present wins
QUERIED_POINT_KEYS: dict[str, Callable[[Item, Any], tuple[int, int] | None]] = {
    "spike_index": _at_index,
    "date": _at_timestamp,
}


def position_bucket(item: Item) -> str:
    """The quarter of its series (``Q1`` .. ``Q4``) where the item's queried point lies, or ``"n/a"``."""
    for key, locate in QUERIED_POINT_KEYS.items():
        if key in item.metadata:
            found = locate(item, item.metadata[key])
            if found is not None:
                index, length = found
                return _QUARTERS[min(3, 4 * index // length)]
    return NOT_APPLICABLE


# --- the items ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateItems:
    """The items of one (template, seed) run of a release."""

    template: ReleaseTemplate
    seed: int
    items: list[Item]


@dataclass(frozen=True)
class ReleaseItems:
    """What is evaluated: the release's runs as stored, or its templates run on fresh seeds."""

    release: str
    checksum: str
    fresh_seed: int | None
    runs: list[TemplateItems]
    warnings: list[str] = field(default_factory=list)


def fresh_seeds(used: Iterable[int], count: int, seed: int) -> list[int]:
    """``count`` distinct seeds drawn deterministically from ``seed``, none of them in ``used``."""
    rng = np.random.default_rng(seed)
    taken, drawn = set(used), []
    while len(drawn) < count:
        candidate = int(rng.integers(0, 2**31 - 1))
        if candidate not in taken:
            taken.add(candidate)
            drawn.append(candidate)
    return drawn


def release_items(release: Release, *, fresh_seed: int | None = None, workers: int = 1,
                  limits: SandboxLimits | None = None) -> ReleaseItems:
    """The release's items (checked against its manifest), or with ``fresh_seed`` new instances of
    the same templates: each template runs on as many seeds as in the release, drawn by
    `fresh_seeds` so that none is a release seed. Raises `RegenerationError` on a failed run, and
    `ReleaseError` when ``fresh_seed`` is asked of a release holding static (imported) items."""
    manifest = release.manifest
    if fresh_seed is None:
        runs = [TemplateItems(entry, run.seed, run.items)
                for entry, run in release.items(workers=workers, limits=limits)]
    else:
        if fresh_seed < 0:
            raise ValueError(f"fresh_seed must be a non-negative integer, got {fresh_seed}")
        release.refuse_fresh_instances("--fresh-seed")
        used = {s for t in manifest.templates for s in t.seeds}
        drawn = fresh_seeds(used, max(len(t.seeds) for t in manifest.templates), fresh_seed)
        entry_of = {TemplateRun(template_id=t.template_id, source=release.sources[t.version],
                                handler=release.local_handler(t),
                                seeds=tuple(drawn[:len(t.seeds)]), num_samples=t.num_samples): t
                    for t in manifest.templates}
        runs = [TemplateItems(entry_of[run.run], run.seed, run.items)
                for run in regenerate(list(entry_of), workers=workers, limits=limits)]
        return ReleaseItems(release=manifest.ref, checksum=manifest.checksum, fresh_seed=fresh_seed, runs=runs,
                            warnings=repeat_warnings(manifest.templates))
    return ReleaseItems(release=manifest.ref, checksum=manifest.checksum, fresh_seed=fresh_seed, runs=runs)


def repeat_warnings(templates: Sequence[ReleaseTemplate], *, max_share: float = 0.05) -> list[str]:
    """Templates whose fresh instances would repeat the release's items or each other (their audit's
    item pool is small beside what the release and the evaluation draw): such "fresh" items measure
    memory of the release, not new instances."""
    warnings = []
    for template in templates:
        if template.pool is None:
            continue
        share = template.pool.repeats_expected(template.items, after=template.items)
        if share > max_share:
            warnings.append(f"{template.template_id}: about {share:.0%} of its {template.items} fresh items repeat "
                            f"an item of the release or of this evaluation (its pool: about "
                            f"{template.pool.estimated_size} different items)")
    return warnings


# --- storing the answers -----------------------------------------------------------------------


def release_versions(session: Session, release: Release) -> dict[str, int]:
    """The bank's version id of each template of the release."""
    bank_id = release.bank_id if release.bank_id is not None else get_bank(session, release.manifest.bank).id
    out: dict[str, int] = {}
    for entry in release.manifest.templates:
        version = find_version(session, bank_id, entry.version)
        if version is None:
            raise ValueError(f"{release.manifest.ref}: template {entry.template_id!r} is not in the bank")
        out[entry.template_id] = version.id
    return out


def _prompt_hash(call: StudentCall) -> str:
    return sha256_hex(canonical_json({"mode": call.mode, "vision": call.student.vision, "prompt": call.prompt}))


@dataclass
class EvaluationStore:
    """An `AnswerCache` that writes every fresh answer of the evaluation ``evaluation_id`` to the
    bank, each in a transaction of its own (a crash or a model error loses nothing, whatever the
    caller's transaction does), and serves the answers that evaluation already stored (a resumed
    evaluation asks only the missing ones). Build it with `open`."""

    engine: Engine
    evaluation_id: str
    versions: dict[str, int]
    adaptive: bool = False
    fresh: int = 0
    reused: int = 0

    def __post_init__(self) -> None:
        with Session(self.engine) as session:
            stored = list_evaluation_responses(session, evaluation_id=self.evaluation_id)
        self._stored = {(r.template_version_id, r.text_format, r.item_hash, r.item_index): r for r in stored}
        self._origin: dict[str, tuple[int, int]] = {}

    @classmethod
    def open(cls, session: Session, release: Release, evaluation_id: str, *, adaptive: bool = False) -> EvaluationStore:
        """The store of the evaluation on the session's database."""
        return cls(session.get_bind(), evaluation_id, release_versions(session, release), adaptive=adaptive)

    @property
    def stored(self) -> int:
        """Answers this evaluation holds in the bank."""
        return len(self._stored)

    def expect(self, item: Item, seed: int, item_index: int) -> None:
        """Record where an item about to be asked comes from (its seed and index in its run)."""
        self._origin[item_hash(item)] = (seed, item_index)

    def _key(self, call: StudentCall) -> tuple[int, str, str, int]:
        hashed = item_hash(call.item)
        return self.versions[call.template_id], call.student.text_format.value, hashed, self._origin[hashed][1]

    def get(self, call: StudentCall) -> StudentResponse | None:
        hit = self._stored.get(self._key(call))
        if hit is None:
            return None
        self.reused += 1
        return StudentResponse(student=call.student.name, rank=call.student.rank, item_index=call.item_index,
                               blind=call.blind, raw=hit.raw, choice=hit.choice,
                               correct=hit.choice == call.item.answer_index)

    def put(self, call: StudentCall, response: StudentResponse) -> None:
        version_id, text_format, hashed, index = self._key(call)
        with Session(self.engine) as session, session.begin():
            row = record_evaluation_response(session, EvaluationResponseCreate(
                evaluation_id=self.evaluation_id, template_version_id=version_id, model=call.student.name,
                text_format=text_format, seed=self._origin[hashed][0], item_index=index, item_hash=hashed,
                prompt_hash=_prompt_hash(call), adaptive=self.adaptive, raw=response.raw, choice=response.choice,
                correct=response.correct))
        self._stored[(version_id, text_format, hashed, index)] = row
        self.fresh += 1


# --- the report --------------------------------------------------------------------------------


class ItemResponse(BaseModel):
    """The model's answer to one item in one text format, with the item's factors."""

    model_config = ConfigDict(extra="forbid")

    template_id: str
    category: str
    dataset: str = Field(description="the template's dataset handler")
    seed: int
    item_index: int = Field(description="0-based index of the item in its (template, seed) run")
    text_format: TextFormat
    options: int
    answer_index: int
    series_length: int | None
    length_bucket: str
    position_bucket: str
    raw: str
    choice: int | None = Field(description="None: the reply was not parsed (counted as wrong)")
    correct: bool


class GroupAccuracy(BaseModel):
    """Accuracy of one group of responses and its random-guess baseline."""

    model_config = ConfigDict(extra="forbid")

    n: int
    correct: int
    unparsed: int
    accuracy: float
    chance: float = Field(description="mean of 1 / number of options: the random-guess accuracy")


class AbilityEstimate(BaseModel):
    """EAP ability on the release's IRT scale and its standard error (posterior SD)."""

    model_config = ConfigDict(extra="forbid")

    theta: float
    se: float
    n_responses: int
    templates: int


class EvaluationReport(BaseModel):
    """Everything one evaluation found, every response included."""

    model_config = ConfigDict(extra="forbid")

    release: str
    release_checksum: str
    model: str
    evaluation_id: str | None = Field(None, description="the id its answers are stored under in the bank; "
                                                        "None: not stored")
    reused_answers: int = Field(0, description="answers a resumed evaluation took from the bank instead of asking")
    fresh_seed: int | None = Field(
        description="seed the fresh instances' seeds were drawn from; None: the release's items")
    warnings: list[str] = Field(default_factory=list, description="fresh instances that repeat items (small pools)")
    seeds: dict[str, list[int]] = Field(description="seeds each template ran on")
    formats: list[TextFormat]
    decimals: int
    overall: GroupAccuracy
    dataset_average: float = Field(description="mean of the per-dataset accuracies (TimeSeriesExamAgent's 'Avg')")
    by_category: dict[str, GroupAccuracy]
    by_dataset: dict[str, GroupAccuracy]
    by_format: dict[str, GroupAccuracy]
    by_length: dict[str, GroupAccuracy]
    by_position: dict[str, GroupAccuracy]
    ability: dict[str, AbilityEstimate] = Field(
        description="per text format; empty when no template has IRT parameters")
    templates_without_irt: list[str]
    responses: list[ItemResponse]
    usage: dict[str, float | int | None] = Field(
        default_factory=dict, description="the calls by outcome (answered, cut, failed), their tokens (cached and "
                                          "cache writes apart) and cost, from the caller that metered them")


def _group(responses: Sequence[ItemResponse]) -> GroupAccuracy:
    correct = sum(r.correct for r in responses)
    return GroupAccuracy(n=len(responses), correct=correct, unparsed=sum(r.choice is None for r in responses),
                         accuracy=correct / len(responses),
                         chance=sum(1 / r.options for r in responses) / len(responses))


def _groups(responses: Sequence[ItemResponse], key: Callable[[ItemResponse], str],
            order: Sequence[str] | None = None) -> dict[str, GroupAccuracy]:
    members: dict[str, list[ItemResponse]] = {}
    for r in responses:
        members.setdefault(key(r), []).append(r)
    names = [name for name in order if name in members] if order is not None else sorted(members)
    return {name: _group(members[name]) for name in names}


def _parameters(runs: Sequence[TemplateItems],
                parameters: Mapping[str, IRTParameters] | None) -> dict[str, IRTParameters]:
    """The given parameters of the runs' templates, else those pinned in the release."""
    if parameters is not None:
        return {run.template.template_id: parameters[run.template.template_id] for run in runs
                if run.template.template_id in parameters}
    return {run.template.template_id: run.template.irt for run in runs if run.template.irt is not None}


def _abilities(responses: Sequence[ItemResponse], parameters: Mapping[str, IRTParameters],
               formats: Sequence[TextFormat]) -> dict[str, AbilityEstimate]:
    out: dict[str, AbilityEstimate] = {}
    for fmt in formats:
        scored = [r for r in responses if r.text_format == fmt and r.template_id in parameters]
        if not scored:
            continue
        frame = pd.DataFrame({"template_id": [r.template_id for r in scored], "correct": [r.correct for r in scored]})
        theta, se = estimate_ability(frame, parameters)
        out[fmt.value] = AbilityEstimate(theta=theta, se=se, n_responses=len(scored),
                                         templates=frame["template_id"].nunique())
    return out


def _length_order() -> list[str]:
    return [length_bucket(high) for high in LENGTH_BUCKETS] + [f">{LENGTH_BUCKETS[-1]}", NO_SERIES]


# --- evaluation --------------------------------------------------------------------------------


async def aevaluate(items: ReleaseItems, student: Student, *, formats: Sequence[TextFormat] = (TextFormat.plain,),
                    max_concurrency: int = 4, parameters: Mapping[str, IRTParameters] | None = None,
                    store: EvaluationStore | None = None,
                    on_progress: Callable[[int, int], None] | None = None) -> EvaluationReport:
    """The student answers every item in every text format (its config's format is replaced;
    its ``decimals`` and ``vision`` are kept); async. ``parameters``: IRT parameters by template
    id (default: the release's); ``store``: write (and reuse) the answers in the bank;
    ``on_progress(done, total)``: called after each answer."""
    formats = list(dict.fromkeys(TextFormat(f) for f in formats))
    if not formats:
        raise ValueError("give at least one text format")
    runs = [run for run in items.runs if run.items]
    if not runs:
        raise ValueError(f"{items.release}: no items to evaluate")
    samples = [TemplateSample(template_id=run.template.template_id, items=run.items) for run in runs]
    if store is not None:
        for run in runs:
            for index, item in enumerate(run.items):
                store.expect(item, run.seed, index)
    pool = PoolConfig(blind=False, max_concurrency=max_concurrency)
    total, answered = len(formats) * sum(len(run.items) for run in runs), [0]

    def on_answer() -> None:
        answered[0] += 1
        if on_progress is not None:
            on_progress(answered[0], total)

    responses: list[ItemResponse] = []
    for fmt in formats:
        answering = Student(student.config.model_copy(update={"text_format": fmt}), student.model)
        reports = await aanswer_templates(samples, [answering], pool, cache=store, on_answer=on_answer)
        for run, report in zip(runs, reports, strict=True):
            for r in report.responses:
                item = run.items[r.item_index]
                length = series_length(item)
                responses.append(ItemResponse(
                    template_id=run.template.template_id, category=run.template.category, dataset=handler_label(run.template.handler),
                    seed=run.seed, item_index=r.item_index, text_format=fmt, options=len(item.options),
                    answer_index=item.answer_index, series_length=length, length_bucket=length_bucket(length),
                    position_bucket=position_bucket(item), raw=r.raw, choice=r.choice, correct=r.correct))
    by_dataset = _groups(responses, lambda r: r.dataset)
    known = _parameters(runs, parameters)
    seeds: dict[str, list[int]] = {}
    for run in items.runs:
        seeds.setdefault(run.template.template_id, []).append(run.seed)
    return EvaluationReport(
        release=items.release, release_checksum=items.checksum, model=student.config.model or student.config.name,
        evaluation_id=store.evaluation_id if store is not None else None,
        reused_answers=store.reused if store is not None else 0, fresh_seed=items.fresh_seed, warnings=items.warnings,
        seeds=seeds, formats=formats, decimals=student.config.decimals,
        overall=_group(responses), dataset_average=sum(g.accuracy for g in by_dataset.values()) / len(by_dataset),
        by_category=_groups(responses, lambda r: r.category), by_dataset=by_dataset,
        by_format=_groups(responses, lambda r: r.text_format.value, [f.value for f in formats]),
        by_length=_groups(responses, lambda r: r.length_bucket, _length_order()),
        by_position=_groups(responses, lambda r: r.position_bucket, [*_QUARTERS, NOT_APPLICABLE]),
        ability=_abilities(responses, known, formats),
        templates_without_irt=sorted({run.template.template_id for run in runs} - set(known)),
        responses=responses,
    )


def evaluate(items: ReleaseItems, student: Student, *, formats: Sequence[TextFormat] = (TextFormat.plain,),
             max_concurrency: int = 4, parameters: Mapping[str, IRTParameters] | None = None,
             store: EvaluationStore | None = None,
             on_progress: Callable[[int, int], None] | None = None) -> EvaluationReport:
    """Synchronous `aevaluate` (not from inside a running event loop)."""
    return asyncio.run(aevaluate(items, student, formats=formats, max_concurrency=max_concurrency,
                                 parameters=parameters, store=store, on_progress=on_progress))


def evaluate_release(release: Release, student: Student, *, formats: Sequence[TextFormat] = (TextFormat.plain,),
                     fresh_seed: int | None = None, max_concurrency: int = 4, workers: int = 1,
                     limits: SandboxLimits | None = None, parameters: Mapping[str, IRTParameters] | None = None,
                     store: EvaluationStore | None = None,
                    on_progress: Callable[[int, int], None] | None = None) -> EvaluationReport:
    """Regenerate the release (or, with ``fresh_seed``, new instances of its templates) and
    evaluate the student on it (see `aevaluate`). A resumed evaluation (a ``store`` with the
    same evaluation id) must use the same ``fresh_seed``, so it is shown the same items."""
    items = release_items(release, fresh_seed=fresh_seed, workers=workers, limits=limits)
    return evaluate(items, student, formats=formats, max_concurrency=max_concurrency, parameters=parameters,
                    store=store, on_progress=on_progress)


# --- text --------------------------------------------------------------------------------------


def _table(title: str, groups: dict[str, GroupAccuracy]) -> list[str]:
    width = max([len(title), *(len(name) for name in groups)])
    lines = [f"{title:<{width}}  {'acc':>6}  {'chance':>6}  {'n':>6}  {'unparsed':>8}"]
    lines += [f"{name:<{width}}  {g.accuracy:6.3f}  {g.chance:6.3f}  {g.n:6d}  {g.unparsed:8d}"
              for name, g in groups.items()]
    return lines


def report_table(report: EvaluationReport) -> str:
    """The report as plain-text tables (responses left out)."""
    source = (f"fresh instances (seed {report.fresh_seed})" if report.fresh_seed is not None
              else "the release's items")
    lines = [f"{report.model} on {report.release} ({source}), formats: {', '.join(f.value for f in report.formats)}",
             *([f"stored as evaluation {report.evaluation_id} ({report.reused_answers} answers reused from the bank)"]
               if report.evaluation_id is not None else []),
             *(f"warning: {warning}" for warning in report.warnings),
             f"overall accuracy {report.overall.accuracy:.3f} (chance {report.overall.chance:.3f}, "
             f"n={report.overall.n}, unparsed {report.overall.unparsed}); dataset average {report.dataset_average:.3f}"]
    for fmt, ability in report.ability.items():
        lines.append(f"IRT ability ({fmt}): {ability.theta:+.3f} (SE {ability.se:.3f}; {ability.n_responses} responses "
                     f"to {ability.templates} templates)")
    if not report.ability:
        lines.append("IRT ability: n/a (no template of the release has IRT parameters)")
    elif report.templates_without_irt:
        lines.append(f"(templates without IRT parameters, left out of the ability: "
                     f"{', '.join(report.templates_without_irt)})")
    for title, groups in [("dataset", report.by_dataset), ("category", report.by_category),
                          ("text format", report.by_format), ("series length", report.by_length),
                          ("queried point", report.by_position)]:
        lines += ["", *_table(title, groups)]
    return "\n".join(lines)
