"""The item and template schema, and the verdict records every stage writes.

Items cross the sandbox boundary as plain JSON and are validated here, on the
host, with messages a template author (person or LLM) can act on.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MIN_OPTIONS = 2
MAX_OPTIONS = 6


class ItemKind(str, Enum):
    """`mc` multiple choice, `tf` true/false, `pz` puzzle (order shuffled segments)."""

    mc = "mc"
    tf = "tf"
    pz = "pz"


class Series(BaseModel):
    """One named channel of an item: finite values, optional timestamps, a unit."""

    model_config = ConfigDict(extra="forbid")

    name: str = "series"
    values: list[float]
    timestamps: list[str] | None = None
    unit: str | None = None

    @field_validator("values")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        if not values:
            raise ValueError("series has no values")
        bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            raise ValueError(
                f"series has {len(bad)} non-finite value(s) (NaN or inf), first at position {bad[0]}; "
                "drop or fill missing values before building the item"
            )
        return values

    @model_validator(mode="after")
    def _timestamps_match(self) -> Series:
        if self.timestamps is not None and len(self.timestamps) != len(self.values):
            raise ValueError(
                f"series '{self.name}' has {len(self.values)} values but {len(self.timestamps)} timestamps"
            )
        return self


class Item(BaseModel):
    """One question instance. A template may give `answer` (the correct option's text)
    instead of `answer_index`; both normalize to `answer_index`."""

    model_config = ConfigDict(extra="forbid")

    question: str
    options: list[str]
    answer_index: int
    kind: ItemKind = ItemKind.mc
    series: list[Series] = Field(default_factory=list)
    context: str | None = None
    rationale: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalize_answer(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"an item must be a dict, got {type(data).__name__}")
        data = dict(data)
        if isinstance(data.get("series"), dict):
            data["series"] = [{"name": k, **v} if isinstance(v, dict) else {"name": k, "values": v}
                              for k, v in data["series"].items()]
        answer = data.pop("answer", None)
        if answer is None:
            if "answer_index" not in data:
                raise ValueError("item has neither 'answer_index' nor 'answer'")
            return data
        options = data.get("options")
        if not isinstance(options, list):
            return data
        if isinstance(answer, int) and not isinstance(answer, bool):
            index = answer
        else:
            matches = [i for i, o in enumerate(options) if o == answer]
            if not matches:
                raise ValueError(f"answer {answer!r} is not one of the options {options!r}")
            index = matches[0]
        if "answer_index" in data and data["answer_index"] != index:
            raise ValueError(
                f"answer {answer!r} and answer_index {data['answer_index']} disagree; give only one"
            )
        data["answer_index"] = index
        return data

    @field_validator("question")
    @classmethod
    def _question_not_empty(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("question is empty")
        return question

    @field_validator("options")
    @classmethod
    def _options_valid(cls, options: list[str]) -> list[str]:
        if len(options) < MIN_OPTIONS:
            raise ValueError(f"an item needs at least {MIN_OPTIONS} options, got {len(options)}")
        if len(options) > MAX_OPTIONS:
            raise ValueError(f"an item has at most {MAX_OPTIONS} options, got {len(options)}")
        if any(not o.strip() for o in options):
            raise ValueError("an option is empty")
        normalized = [" ".join(o.split()).casefold() for o in options]
        dupes = sorted({options[i] for i, o in enumerate(normalized) if normalized.count(o) > 1})
        if dupes:
            raise ValueError(f"duplicate options: {dupes}; every option must be distinct")
        return options

    @model_validator(mode="after")
    def _answer_in_range(self) -> Item:
        if not 0 <= self.answer_index < len(self.options):
            raise ValueError(
                f"answer_index {self.answer_index} is out of range for {len(self.options)} options "
                f"(valid: 0..{len(self.options) - 1})"
            )
        if self.kind is ItemKind.tf and len(self.options) != 2:
            raise ValueError(f"a true/false item has exactly 2 options, got {len(self.options)}")
        return self

    @property
    def answer(self) -> str:
        return self.options[self.answer_index]

    @property
    def answer_letter(self) -> str:
        return chr(ord("A") + self.answer_index)


class Provenance(BaseModel):
    """Where a template came from."""

    model_config = ConfigDict(extra="forbid")

    origin: Literal["curated", "generated", "user"] = "curated"
    generator: str | None = None
    parent_hash: str | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


def content_hash(source: str) -> str:
    """sha256 of the template source with line endings normalized: the version key."""
    return hashlib.sha256(source.replace("\r\n", "\n").encode("utf-8")).hexdigest()


class Template(BaseModel):
    """An item template: Python source defining `question(num_samples) -> list[dict]`."""

    model_config = ConfigDict(extra="forbid")

    id: str
    source: str
    title: str
    category: str
    concepts: list[str] = Field(default_factory=list)
    handler: str | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    rationale: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)

    @property
    def content_hash(self) -> str:
        return content_hash(self.source)


# --- verdict records (DESIGN.md section 3) -------------------------------------------------


class RunStatus(str, Enum):
    """How a sandboxed run ended."""

    ok = "ok"
    refused = "refused"  # the policy rejected the source at compile time
    error = "error"  # it raised at run time
    killed = "killed"  # a limit ended it
    rejected = "rejected"  # its output failed validation


class StructureReport(BaseModel):
    """The structure check's verdict on one template."""

    status: RunStatus
    items: list[Item] = Field(default_factory=list)
    error: str | None = None
    traceback_tail: str | None = None
    elapsed_ms: float = 0.0
    deterministic: bool | None = None
    varied: bool | None = None

    @property
    def passed(self) -> bool:
        return self.status is RunStatus.ok


class JudgeScore(BaseModel):
    """One judge's score on one criterion; `score` is None when the reply never parsed."""

    judge: str
    criterion: Literal["relevance", "unambiguity", "specificity", "solvability", "needs_series"]
    score: float | None = Field(default=None, ge=1, le=10)
    rationale: str = ""
    samples: list[float] = Field(default_factory=list)
    method: Literal["logprobs", "samples"] | None = None  # probability-weighted or mean of sampled scores
    attempts: int = 0  # model calls made, retries of malformed replies included
    error: str | None = None  # why `score` is None


class StudentResponse(BaseModel):
    """One student's answer to one item."""

    student: str
    rank: int
    item_index: int
    blind: bool = False
    raw: str
    choice: int | None = None
    correct: bool = False


class CapabilityVerdict(BaseModel):
    """Whether accuracy rises with declared capability, with the statistic behind it."""

    accuracies: dict[str, float]
    statistic: float | None = None
    interval: tuple[float, float] | None = None
    reversal: bool = False
    blind_flag: bool = False
    reason: str = ""


class IRTParameters(BaseModel):
    """Template-level 2PL parameters with standard errors."""

    discrimination: float
    difficulty: float
    discrimination_se: float
    difficulty_se: float
    flags: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    """The final decision on a template version, with its reasons."""

    accepted: bool
    stage: Literal["structure", "judges", "students", "capability", "review"]
    reasons: list[str] = Field(default_factory=list)
