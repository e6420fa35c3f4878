"""The configuration of the model-based checks: the judge panel (`PanelConfig`), the student pool
(`PoolConfig`) and the capability filter (`CapabilityConfig`), apart from the checks themselves
(`judges`, `students`, `capability`, which re-export them) so that a request naming them (an
authoring run's, a job's) is validated without importing the models and the statistics behind
the checks."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from itemsmith.items.text_format import TextFormat

__all__ = ["CapabilityConfig", "Criterion", "CriterionThreshold", "Outcome", "PanelConfig", "PoolConfig"]

Criterion = Literal["relevance", "unambiguity", "specificity", "solvability", "needs_series"]


class CriterionThreshold(BaseModel):
    """A criterion passes when the judges' mean and their lowest score reach these values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mean: float = Field(6.0, ge=1, le=10)
    min: float = Field(4.0, ge=1, le=10)


class PanelConfig(BaseModel):
    """What the panel scores, how it renders items, and the thresholds it applies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    criteria: tuple[Criterion, ...] = ("relevance", "unambiguity", "specificity", "solvability", "needs_series")
    thresholds: dict[Criterion, CriterionThreshold] = Field(default_factory=dict)
    min_judges: int | None = Field(None, ge=1, description="valid scores a criterion needs, else it fails as "
                                                            "missing; None: every judge of the panel")
    items_per_prompt: int = Field(3, ge=1, le=20)
    text_format: TextFormat = Field(TextFormat.compact, description="how the items' series are printed; compact "
                                    "states the time axis once and costs about a quarter of plain's tokens")
    decimals: int = Field(2, ge=0, le=10)
    max_series_points: int = Field(60, ge=2, description="values shown per channel; longer series are downsampled "
                                                         "(rendering.downsample_item)")
    max_concurrency: int = Field(4, ge=1)

    @model_validator(mode="after")
    def _criteria_known(self) -> PanelConfig:
        if not self.criteria or len(set(self.criteria)) != len(self.criteria):
            raise ValueError("criteria must be a non-empty list without repeats")
        extra = set(self.thresholds) - set(self.criteria)
        if extra:
            raise ValueError(f"thresholds for criteria not scored: {sorted(extra)}")
        return self

    def threshold(self, criterion: Criterion) -> CriterionThreshold:
        return self.thresholds.get(criterion, CriterionThreshold())


class PoolConfig(BaseModel):
    """The blind condition and how it is judged, and the concurrency limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    blind: bool = True
    blind_margin: float = Field(0.1, ge=0, le=1,
                                description="blind accuracy this close to with-series accuracy counts as 'as well'")
    blind_alpha: float = Field(0.05, gt=0, lt=1, description="one-sided binomial test: blind accuracy above chance")
    max_concurrency: int = Field(4, ge=1)


class Outcome(str, Enum):
    rising = "rising"
    all_poor = "all_poor"
    flat = "flat"
    reversal = "reversal"
    inconclusive = "inconclusive"


_DEFAULT_KEEP = {Outcome.rising: True, Outcome.all_poor: True, Outcome.flat: True, Outcome.inconclusive: True,
                 Outcome.reversal: False}


class CapabilityConfig(BaseModel):
    """The interval, the chance test and which outcomes keep a template."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interval_level: float = Field(0.8, gt=0, lt=1, description="two-sided level of the bootstrap interval")
    bootstrap: int = Field(2000, ge=100, le=100_000)
    seed: int = 0
    chance_alpha: float = Field(0.05, gt=0, lt=1, description="one-sided test of a student's accuracy above chance")
    keep: dict[Outcome, bool] = Field(default_factory=lambda: dict(_DEFAULT_KEEP))
    reject_blind: bool = True

    @field_validator("keep")
    @classmethod
    def _complete(cls, keep: dict[Outcome, bool]) -> dict[Outcome, bool]:
        return {**_DEFAULT_KEEP, **keep}
