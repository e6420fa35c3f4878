"""The caller's banks, template versions and releases: looked up by id, listed, found by name.

An id that does not exist and an id of another owner's record give the same `NotFoundError`
(404), so ids of other owners' records do not leak.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.templates_bank.storage import (
    BankPublic,
    BankRow,
    NotFoundError,
    ReleaseRow,
    TemplateVersionPublic,
    TemplateVersionRow,
)

__all__ = ["owned_bank", "owned_bank_named", "owned_banks", "owned_release", "owned_releases", "owned_version",
           "reviewer_name"]


def reviewer_name(owner: str, key_id: int) -> str:
    """Who a review, edit or release is recorded as: the key's owner and the key's id."""
    return f"{owner[:180]} (key {key_id})"


def owned_bank(session: Session, bank_id: int, owner: str) -> BankPublic:
    row = session.get(BankRow, bank_id)
    if row is None or row.owner != owner:
        raise NotFoundError(f"no bank with id {bank_id}")
    return BankPublic.model_validate(row)


def owned_banks(session: Session, owner: str) -> list[BankPublic]:
    """The owner's banks, by name."""
    rows = session.scalars(select(BankRow).where(BankRow.owner == owner).order_by(BankRow.name))
    return [BankPublic.model_validate(row) for row in rows]


def owned_bank_named(session: Session, name: str, owner: str) -> BankPublic | None:
    """The owner's bank called `name` (bank names are unique per owner), or None."""
    row = session.scalar(select(BankRow).where(BankRow.owner == owner, BankRow.name == name))
    return None if row is None else BankPublic.model_validate(row)


def owned_version(session: Session, version_id: int, owner: str) -> tuple[TemplateVersionPublic, BankPublic]:
    """The template version and its bank."""
    found = session.execute(select(TemplateVersionRow, BankRow).join(BankRow, BankRow.id == TemplateVersionRow.bank_id)
                            .where(TemplateVersionRow.id == version_id)).first()
    if found is None or found[1].owner != owner:
        raise NotFoundError(f"no template version with id {version_id}")
    return TemplateVersionPublic.model_validate(found[0]), BankPublic.model_validate(found[1])


def owned_release(session: Session, release_id: int, owner: str) -> tuple[ReleaseRow, BankPublic]:
    """The release row (its manifest as stored) and its bank."""
    found = session.execute(select(ReleaseRow, BankRow).join(BankRow, BankRow.id == ReleaseRow.bank_id)
                            .where(ReleaseRow.id == release_id)).first()
    if found is None or found[1].owner != owner:
        raise NotFoundError(f"no release with id {release_id}")
    return found[0], BankPublic.model_validate(found[1])


def owned_releases(session: Session, bank_id: int, owner: str) -> list[ReleaseRow]:
    """The release rows of the owner's bank, oldest first (`NotFoundError` for another owner's bank)."""
    owned_bank(session, bank_id, owner)
    return list(session.scalars(select(ReleaseRow).where(ReleaseRow.bank_id == bank_id).order_by(ReleaseRow.number)))
