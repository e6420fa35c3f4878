"""The curated template bank shipped with the package: `.py` templates grouped in folders,
each folder with a `manifest.toml` of titles and tags."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from itemsmith.items.schema import Provenance, Template

CURATED_DIR = Path(__file__).parent / "curated"

Category = Literal[
    "pattern_recognition", "noise_understanding", "similarity_analysis", "anomaly_detection", "causality",
    "transformation", "temporal_relation", "retrieval", "arithmetic", "domain_reasoning",
]


class ManifestEntry(BaseModel):
    """One `[[template]]` table of a manifest; the template's id is its file's stem."""

    model_config = ConfigDict(extra="forbid")

    file: str
    title: str
    category: Category
    concepts: list[str]
    difficulty: Literal["easy", "medium", "hard"]
    rationale: str
    handler: str = "synthetic"


class CuratedTemplateError(LookupError):
    """A curated template name is unknown."""


@cache
def load_curated() -> dict[str, Template]:
    """Every curated template by id, in manifest order."""
    templates: dict[str, Template] = {}
    for manifest in sorted(CURATED_DIR.glob("*/manifest.toml")):
        for raw in tomllib.loads(manifest.read_text())["template"]:
            entry = ManifestEntry.model_validate(raw)
            path = manifest.parent / entry.file
            template_id = path.stem
            if template_id in templates:
                raise ValueError(f"curated template id {template_id!r} appears twice ({manifest})")
            templates[template_id] = Template(
                id=template_id,
                source=path.read_text(),
                title=entry.title,
                category=entry.category,
                concepts=entry.concepts,
                handler=entry.handler,
                difficulty=entry.difficulty,
                rationale=entry.rationale,
                provenance=Provenance(origin="curated"),
            )
    return templates


def get_curated(template_id: str) -> Template:
    """One curated template; unknown ids get the list of close names."""
    templates = load_curated()
    if template_id not in templates:
        close = [t for t in templates if template_id.lower() in t.lower()][:8]
        hint = f"; did you mean: {', '.join(close)}" if close else "; see `itemsmith bank list`"
        raise CuratedTemplateError(f"no curated template named {template_id!r}{hint}")
    return templates[template_id]
