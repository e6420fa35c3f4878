"""Load the curated templates shipped with the package into a bank."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from itemsmith.templates_bank.storage._banks import add_template_version
from itemsmith.templates_bank.storage._schemas import ReviewCreate, TemplateVersionPublic
from itemsmith.templates_bank.storage._verdicts import list_reviews, record_review

__all__ = ["import_curated"]


def import_curated(session: Session, bank_id: int, *, reviewer: str,
                   template_ids: Sequence[str] | None = None) -> list[TemplateVersionPublic]:
    """Store curated templates (all, or ``template_ids``) as versions approved by ``reviewer``.
    Idempotent: templates already stored keep their versions and reviews."""
    from itemsmith.templates_bank.curated import get_curated, load_curated  # only here: storage is read without it

    templates = list(load_curated().values()) if template_ids is None else [get_curated(t) for t in template_ids]
    versions = []
    for template in templates:
        version = add_template_version(session, bank_id, template, created_by=reviewer)
        if not list_reviews(session, version.id):
            record_review(session, version.id, ReviewCreate(decision="approve", reviewer=reviewer,
                                                            note="curated template shipped with itemsmith"))
        versions.append(version)
    return versions
