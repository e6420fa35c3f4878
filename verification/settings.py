"""The verification layer's settings: the item audit's thresholds (``ITEMSMITH_AUDIT_*``) and the
re-derivation stage's (``ITEMSMITH_REDERIVATION_*``).

The audit is always on. A user may relax a threshold (e.g. ``ITEMSMITH_AUDIT_ALPHA=0.05`` is
stricter, ``ITEMSMITH_AUDIT_MIN_EXCESS=0.2`` laxer); every report lists the thresholds that were
relaxed below the defaults, so a lowered bar is never silent.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.layer_settings import LayerSettings

__all__ = ["AuditConfig", "RederivationConfig", "VerificationSettings"]

# For each threshold, which direction makes the audit laxer than its default.
_LAXER_WHEN: dict[str, Literal["higher", "lower"]] = {
    "alpha": "lower",  # a smaller alpha needs stronger evidence to fail a solver
    "min_excess": "higher",
    "excess_z": "higher",
    "min_items": "lower",
    "seeds": "lower",
    "items": "lower",
    "confirmation_rounds": "lower",
    "min_distinct_series_share": "lower",
    "min_options": "lower",
    "min_mismatched_keys": "higher",
    "near_duplicate_correlation": "higher",
    "max_unmatched_key_share": "higher",
}


class AuditConfig(BaseModel):
    """Thresholds of the item audit; the defaults are the project's bar."""

    model_config = ConfigDict(extra="forbid")

    alpha: float = Field(0.01, gt=0, lt=1, description="family-wise error rate over the blind solvers (Holm)")
    min_excess: float = Field(
        0.15, ge=0, le=1,
        description="a solver fails the template only when it also gains this share of all audited items over "
                    "chance ((right - expected by chance) / items): a smaller cue is significant but worth too few "
                    "points to a model that never sees the data to call the items answerable without it")
    excess_z: float = Field(
        1.645, ge=0, le=5,
        description="standard errors by which a template's gain must clear min_excess (one-sided 95 %): its items "
                    "are a sample of what it makes, and a cue worth about the bar is no finding either way, so a "
                    "template whose gain sits on the bar is accepted in every run instead of in half of them")
    confirmation_rounds: int = Field(
        3, ge=1, le=10,
        description="rounds of fresh seeds a rejection is confirmed over at most: another round is drawn while a "
                    "blind solver's pooled gain clears min_excess and its lower bound does not (a cue near the bar "
                    "is judged on more items, instead of by which side of the bar one draw leaves it)")
    items: int = Field(240, ge=20, le=5000, description="items the audit draws from the template")
    seeds: int = Field(8, ge=2, le=64, description="fresh seeds the items are drawn over")
    min_items: int = Field(60, ge=10, description="fewer valid items than this and the audit cannot judge")
    min_applicable: int = Field(30, ge=5, description="a solver is tested only on at least this many items")
    min_distinct_series_share: float = Field(
        0.5, ge=0, le=1, description="distinct series (channel data) per item, over all drawn items")
    pool_evaluation_items: int = Field(
        200, ge=1, description="the item pool is reported small when an evaluation of this many fresh items would "
                               "repeat more than pool_max_repeats of them (a property, never a rejection)")
    pool_max_repeats: float = Field(0.05, ge=0, le=1, description="see pool_evaluation_items")
    min_options: int = Field(4, ge=2, le=6, description="fewest options a multiple-choice item may offer")
    min_mismatched_keys: int = Field(
        10, ge=1, description="items keyed with another statistic of a series shown than the question asks for "
                              "that fail the template (when they are also half of the items that can be told)")
    unverified_derivation: Literal["reject", "flag"] = Field(
        "reject", description="a channel whose derived= the audit cannot read as a recipe (or cannot compute on the "
                              "named records): reject the template, or flag it in the report and pass")
    max_unmatched_key_share: float = Field(
        0.2, ge=0, le=1,
        description="largest share of the items whose key the audit can recompute that may be keyed with no "
                    "reading of the asked statistic of a series shown (and at least min_mismatched_keys fail)")

    # the static audit (items imported from an existing benchmark, `audit.static`)
    power_effect: float = Field(
        0.25, gt=0, le=1, description="the static audit states each test's power against a cue worth this much "
                                      "accuracy over chance")
    near_duplicate_correlation: float = Field(
        0.999, gt=0, le=1, description="two items of a group whose series correlate at least this much (same "
                                       "length, z-normalized) show the same data")

    def lowered(self) -> list[str]:
        """The thresholds set laxer than the defaults, as `name=value (default d)`."""
        changes: list[str] = []
        if self.unverified_derivation != "reject":
            changes.append(f"unverified_derivation={self.unverified_derivation} (default reject)")
        for name, laxer in _LAXER_WHEN.items():
            value, default = getattr(self, name), type(self).model_fields[name].default
            if (laxer == "higher" and value > default) or (laxer == "lower" and value < default):
                changes.append(f"{name}={value} (default {default})")
        return changes


class RederivationConfig(BaseModel):
    """Whether a run re-derives its keys by default, and the stage's thresholds."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="whether a run that does not say runs the re-derivation stage")

    tries: int = Field(3, ge=1, le=10, description="programs the solver may write before the template counts as "
                                                  "not re-derivable (a retry is told only its own error; a program "
                                                  "it already wrote ends the tries)")
    seeds: int = Field(3, ge=1, le=16, description="fresh seeds drawn at small sizes")
    small_size: tuple[int, int] = Field((6, 14), description="range of num_samples of the small draws")
    large_size: int = Field(60, ge=1, le=1000, description="num_samples of the one large draw")
    max_disagreement: float = Field(0.1, ge=0, le=1, description="largest share of answered items whose value "
                                                                 "fits another option or none")
    max_ambiguous: float = Field(0.1, ge=0, le=1, description="largest share of answered items whose value fits "
                                                              "several options")
    max_failed: float = Field(0.5, ge=0, le=1, description="a larger share of items the program cannot solve "
                                                           "makes the template not re-derivable")
    on_not_rederivable: Literal["flag", "reject"] = Field(
        "flag", description="flag: the stage passes and its reasons say 'not re-derivable' (the report shows it); "
                            "reject: the template is rejected")
    solver_wall_s: float = Field(20.0, gt=0, le=600, description="wall-clock limit of one sandbox run of a solver")
    solver_item_s: float = Field(1.0, ge=0, le=60, description="wall-clock seconds per item added to that limit: a "
                                                               "careful program (a search over change points) may take "
                                                               "a second an item, and one run holds many items")
    examples: int = Field(3, ge=1, le=8, description="items shown to the solver per program, each from another "
                                                   "draw, so it sees what varies between items")
    programs: int = Field(3, ge=2, le=8, description="independent programs (new conversations, other items) written "
                                                   "before a disagreement rejects; it rejects only when none agrees "
                                                   "with the keys and two of them agree with each other")
    concurrence: float = Field(0.8, gt=0, le=1, description="two programs confirm each other when they pick the "
                                                           "same options on at least this share of the items both "
                                                           "answered")
    min_data_checked: int = Field(10, ge=1, description="items the agreeing program must answer with other items' "
                                                        "series before it can be said to read the text")
    max_kept_key: float = Field(0.9, gt=0, le=1, description="a larger share of those still answered with the key "
                                                            "means the answer is read from the text, not the data")


class VerificationSettings(LayerSettings):
    """The verification layer's settings, read from the environment."""

    renamed_variables = {"ITEMSMITH_REDERIVATION": "ITEMSMITH_REDERIVATION_ENABLED"}

    audit: AuditConfig = Field(default_factory=AuditConfig, description="the item audit")
    rederivation: RederivationConfig = Field(default_factory=RederivationConfig,
                                             description="the re-derivation stage")
