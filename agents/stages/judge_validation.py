"""Which judge models may decide: a judge counts only once it is validated.

A judge's scores decide a template only when its separation of good and flawed templates has been
measured on a corpus of known templates and is good enough: the AUC of its mean score over the
criteria (the probability that a good template scores above a flawed one, ties half) of at least
`AgentSettings.min_judge_auc` (0.7). Any other judge is advisory: its scores are recorded and shown
beside every verdict, and decide nothing (the re-verification of a release with it changes no
version's status). Measured, the local qwen2.5-coder-1.5b separates the semantic corpus at about
0.6, and qwen2.5-coder-0.5b scores every template 4.6 to 5.1.

`itemsmith judges validate --judge SPEC --corpus DIR` measures a judge (`measure_judge`, which imports
the models and the sandbox when it runs: the rest is read on every command's start) on a corpus
in the semantic corpus's format (a `manifest.toml` of `[[template]]` entries with `file`, `kind`
good/flawed/gaming and `handler`) and records the result in the validations file
(`ITEMSMITH_JUDGE_VALIDATIONS`, default `judge_validations.json` in the data folder), which every
entry point reads (`validated`).
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.validation_file import load_records, store_record
from itemsmith.templates_bank.settings import BankSettings

__all__ = ["JudgeValidation", "advisory", "load_validations", "measure_judge", "record_validation", "validated",
           "validations_path"]

FLAWED_KINDS = ("flawed", "gaming")
REMEASURE = "itemsmith judges validate"


class JudgeValidation(BaseModel):
    """One judge's measured separation of a corpus's good and flawed templates."""

    judge: str = Field(description="the judge's model spec")
    auc: float | None = Field(description="AUC of the mean score over the criteria (0.5: chance; None: not measurable)")
    criteria: dict[str, float | None] = Field(description="AUC per criterion")
    corpus: str = Field(description="the corpus folder measured on")
    corpus_hash: str = Field(description="sha256 of its manifest")
    good: int
    flawed: int
    measured_at: datetime

    def decisive(self, min_auc: float) -> bool:
        return self.auc is not None and self.auc >= min_auc


def validations_path(settings: AgentSettings) -> Path:
    return settings.judge_validations or BankSettings().data_dir / "judge_validations.json"


def load_validations(settings: AgentSettings) -> dict[str, JudgeValidation]:
    """The recorded validations by judge spec (none when the file does not exist yet)."""
    return load_records(validations_path(settings), JudgeValidation, "judge", kind="judge", remeasure=REMEASURE)


def record_validation(validation: JudgeValidation, settings: AgentSettings) -> Path:
    """Store `validation` (replacing the judge's earlier one); returns the file."""
    return store_record(validations_path(settings), validation, "judge", kind="judge", remeasure=REMEASURE)


def validated(spec: ModelSpec, settings: AgentSettings) -> bool:
    """Whether `spec`'s scores may decide: its recorded AUC reaches `settings.min_judge_auc`."""
    found = load_validations(settings).get(str(spec))
    return found is not None and found.decisive(settings.min_judge_auc)


def _entries(corpus: Path, per_kind: int | None) -> list[dict[str, str]]:
    manifest = corpus / "manifest.toml"
    if not manifest.is_file():
        raise FileNotFoundError(f"{corpus}: no manifest.toml (a corpus lists its templates as [[template]] entries "
                                "with file, kind good/flawed/gaming and handler)")
    entries: list[dict[str, str]] = tomllib.loads(manifest.read_text()).get("template", [])
    if per_kind is None:
        return entries
    taken: dict[str, int] = {}
    chosen = []
    for entry in entries:
        if taken.get(entry["kind"], 0) < per_kind:
            taken[entry["kind"]] = taken.get(entry["kind"], 0) + 1
            chosen.append(entry)
    return chosen


def _handler(corpus: Path, name: str) -> str:
    """A built-in handler's name as it is; a handler file relative to the corpus, else to the folder
    above it, else as given."""
    for base in (corpus, corpus.parent, corpus.parent.parent):
        if name.endswith(".py") and (base / name).is_file():
            return str(base / name)
    return name


async def measure_judge(spec: ModelSpec, corpus: Path, *, settings: AgentSettings, per_kind: int | None = None,
                        items: int = 3, seed: int = 7,
                        on_template: Callable[[str, str, dict[str, float]], None] | None = None) -> JudgeValidation:
    """Score every template of `corpus` (its first `per_kind` of each kind) with the judge as the
    panel does (`items` items drawn in the sandbox under `seed`) and measure its separation of the
    good templates from the flawed and gaming ones. `on_template(kind, file, scores)` follows it."""
    from itemsmith.agents.llm.factory import CallLog, build_judges, retry_policy
    from itemsmith.items.hashing import sha256_hex
    from itemsmith.items.schema import Item
    from itemsmith.sandbox import run_template
    from itemsmith.verification.judges import PanelConfig, ajudge_template, separation_auc
    from itemsmith.verification.samples import TemplateSample

    judge = build_judges([spec], settings=settings, samples=1)[0].bind(CallLog(), retry_policy(settings))
    panel = PanelConfig(items_per_prompt=items, max_concurrency=1)
    rows: list[tuple[str, dict[str, float]]] = []
    for entry in _entries(corpus, per_kind):
        handler = _handler(corpus, entry["handler"])
        result = await asyncio.to_thread(run_template, (corpus / entry["file"]).read_text(), handler,
                                         num_samples=items, seed=seed)
        if not result.ok:
            continue
        sample = TemplateSample(template_id=entry["file"], items=[Item.model_validate(i) for i in result.items],
                                task=f"questions about the {entry['handler']} data that need the series",
                                dataset=entry["handler"])
        judgement = await ajudge_template(sample, [judge], panel)
        scores: dict[str, float] = {s.criterion: s.score for s in judgement.scores if s.score is not None}
        rows.append((entry["kind"], scores))
        if on_template is not None:
            on_template(entry["kind"], entry["file"], scores)

    def aucs(pick: Callable[[dict[str, float]], float | None]) -> tuple[float | None, int, int]:
        good = [v for kind, row in rows if kind == "good" and (v := pick(row)) is not None]
        bad = [v for kind, row in rows if kind in FLAWED_KINDS and (v := pick(row)) is not None]
        return separation_auc(good, bad), len(good), len(bad)

    def criterion(name: str) -> Callable[[dict[str, float]], float | None]:
        return lambda row: row.get(name)

    mean, good, flawed = aucs(lambda row: sum(row.values()) / len(row) if row else None)
    return JudgeValidation(judge=str(spec), auc=mean, criteria={c: aucs(criterion(c))[0] for c in panel.criteria},
                           corpus=str(corpus), corpus_hash=sha256_hex((corpus / "manifest.toml").read_bytes()),
                           good=good, flawed=flawed, measured_at=datetime.now(UTC))


def advisory(specs: Sequence[ModelSpec], settings: AgentSettings) -> list[ModelSpec]:
    """The judges of `specs` that are not validated (their scores decide nothing)."""
    return [spec for spec in specs if not validated(spec, settings)]
