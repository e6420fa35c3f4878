"""The input every content stage reads: a template's sampled items and what they were written for."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.schema import Item

__all__ = ["TemplateSample"]


class TemplateSample(BaseModel):
    """Items sampled from one template version (the structure check's output), with the user's
    task description and the dataset handler's description, which the judges score against."""

    model_config = ConfigDict(extra="forbid")

    template_id: str
    items: list[Item] = Field(min_length=1)
    task: str = ""
    dataset: str = ""
    evidence: list[str] = Field(default_factory=list, description="findings of the earlier checks (the "
                                                                  "re-derivation), shown to the judges")
