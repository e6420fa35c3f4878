"""Diversity of stored templates (TimeSeriesExamAgent's measures, `verification.diversity`): mean pairwise
embedding and Levenshtein distances over the questions of their items, and near-duplicate
template pairs, for an authoring run's stored templates (the author job's result, ``itemsmith
author --bank``, ``bank import-run``) and a bank's view on the review page.

The items are those of each version's newest structure check, stored in the bank with it (no
template is run again). Which embedder is used is a setting, ``ITEMSMITH_DIVERSITY_EMBEDDER``:
``minilm`` (default: all-MiniLM-L6-v2, the ``diversity`` extra) or ``off`` (text similarity
only); when the model cannot be loaded the summary says so and uses text similarity only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.items.schema import Item, StructureReport
from itemsmith.templates_bank.settings import BankSettings
from itemsmith.templates_bank.storage import VerdictRow, releasable_versions
from itemsmith.verification.diversity import (
    DiversityReport,
    Embedder,
    NearDuplicate,
    diversity,
    item_text,
    minilm_embedder,
    near_duplicates,
)

__all__ = ["TemplateDiversity", "bank_diversity", "configured_embedder", "items_diversity",
           "stored_diversity"]

log = logging.getLogger("itemsmith.diversity")


class TemplateDiversity(BaseModel):
    """Diversity of a set of templates' items."""

    templates: int
    items_per_template: int | None = Field(None, description="items per template compared (None: all)")
    embedder: str = Field(description="the sentence embedder, or why there was none")
    report: DiversityReport | None = Field(description="None: fewer than two item texts")
    near_duplicates: list[NearDuplicate]


def configured_embedder() -> tuple[Embedder | None, str]:
    """The embedder ``ITEMSMITH_DIVERSITY_EMBEDDER`` names and its name (None and the reason when off or absent)."""
    if BankSettings().diversity.embedder == "off":
        return None, "off (ITEMSMITH_DIVERSITY_EMBEDDER=off): text similarity only"
    try:
        minilm_embedder(["probe"])
    except ImportError as exc:
        log.warning("diversity without embeddings: %s", exc)
        return None, f"none ({exc}): text similarity only"
    return minilm_embedder, "all-MiniLM-L6-v2"


def items_diversity(items: Mapping[str, Sequence[Item]], embedder: Embedder | None,
                    embedder_name: str) -> TemplateDiversity:
    """Diversity of the items' texts (question and options) and near-duplicate template pairs."""
    questions = {template: [item_text(item) for item in template_items] for template, template_items in items.items()}
    texts = [text for template_texts in questions.values() for text in template_texts]
    return TemplateDiversity(templates=len(questions), embedder=embedder_name,
                             report=diversity(texts, embedder=embedder) if len(texts) >= 2 else None,
                             near_duplicates=near_duplicates(questions, embedder=embedder))


def stored_diversity(session: Session, versions: Mapping[str, int],
                     embedder: tuple[Embedder | None, str] | None = None,
                     items_per_template: int | None = None) -> TemplateDiversity:
    """`items_diversity` of the versions (template id -> version id), on the items of each
    version's newest structure check; ``embedder`` (the embedder and its name) defaults to
    `configured_embedder`."""
    chosen, name = embedder if embedder is not None else configured_embedder()
    by_version = {version_id: template for template, version_id in versions.items()}
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                           .where(VerdictRow.template_version_id.in_(list(by_version)), VerdictRow.stage == "structure")
                           .order_by(VerdictRow.id))
    items = {by_version[version_id]: StructureReport.model_validate(payload).items[:items_per_template]
             for version_id, payload in rows}
    summary = items_diversity(items, chosen, name)
    return summary.model_copy(update={"items_per_template": items_per_template})


def bank_diversity(session: Session, bank_id: int, *, max_templates: int = 300, items_per_template: int = 3,
                   embedder: tuple[Embedder | None, str] | None = None) -> TemplateDiversity:
    """`stored_diversity` of the bank's releasable templates (their newest approved or accepted
    version), at most ``max_templates`` of them and ``items_per_template`` items each, so that a
    page view stays quick (near-duplicate search compares every pair of texts)."""
    versions = releasable_versions(session, bank_id)[:max_templates]
    return stored_diversity(session, {v.template_key: v.id for v in versions}, embedder, items_per_template)
