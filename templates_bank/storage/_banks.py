"""Banks and their immutable template versions."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from itemsmith.items.schema import Template
from itemsmith.templates_bank.storage._errors import BankExistsError, NotFoundError, VersionConflictError
from itemsmith.templates_bank.storage._models import BankRow, TemplateVersionRow
from itemsmith.templates_bank.storage._schemas import BankCreate, BankPublic, TemplateVersionPublic
from itemsmith.templates_bank.storage._summaries import summary_on_new_version

__all__ = ["add_template_version", "create_bank", "find_version", "get_bank", "get_bank_by_id", "get_version",
           "list_banks", "list_versions"]


def create_bank(session: Session, bank: BankCreate) -> BankPublic:
    """A new bank; `BankExistsError` when its owner has a bank of that name (names are unique per
    owner: two owners may use the same name)."""
    row = BankRow(**bank.model_dump())
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        raise BankExistsError(f"a bank named {bank.name!r} exists already (owner {bank.owner!r})") from None
    return BankPublic.model_validate(row)


def get_bank(session: Session, name: str, owner: str | None = None) -> BankPublic:
    """The bank named `name` (of `owner` when given, or named ``OWNER/NAME``: bank names have no
    "/"). Without an owner, a name that several owners use is ambiguous (`NotFoundError` naming
    the owners: this is for the operator's CLI, where OWNER/NAME picks one)."""
    if owner is None and "/" in name:
        owner, name = name.rsplit("/", 1)
    query = select(BankRow).where(BankRow.name == name)
    if owner is not None:
        query = query.where(BankRow.owner == owner)
    rows = session.scalars(query.order_by(BankRow.id).limit(2)).all()
    if len(rows) > 1:
        owners = ", ".join(session.scalars(select(BankRow.owner).where(BankRow.name == name).order_by(BankRow.owner)))
        raise NotFoundError(f"several owners have a bank named {name!r} ({owners}); name the owner: OWNER/{name}")
    if not rows:
        if owner is not None:
            raise NotFoundError(f"no bank named {name!r}")
        known = ", ".join(session.scalars(select(BankRow.name).distinct().order_by(BankRow.name))) or "none yet"
        raise NotFoundError(f"no bank named {name!r} (banks: {known})")
    return BankPublic.model_validate(rows[0])


def get_bank_by_id(session: Session, bank_id: int) -> BankPublic:
    """The bank with this id (names are unique per owner only; jobs and the service name banks by id)."""
    row = session.get(BankRow, bank_id)
    if row is None:
        raise NotFoundError(f"no bank with id {bank_id}")
    return BankPublic.model_validate(row)


def list_banks(session: Session) -> list[BankPublic]:
    return [BankPublic.model_validate(r) for r in session.scalars(select(BankRow).order_by(BankRow.name))]


def _latest_of_key(session: Session, bank_id: int, template_key: str) -> TemplateVersionRow | None:
    return session.scalar(select(TemplateVersionRow)
                          .where(TemplateVersionRow.bank_id == bank_id, TemplateVersionRow.template_key == template_key)
                          .order_by(TemplateVersionRow.id.desc()).limit(1))


def find_version(session: Session, bank_id: int, content_hash: str) -> TemplateVersionPublic | None:
    """The version of the bank whose source has this sha256, if any."""
    row = session.scalar(select(TemplateVersionRow).where(TemplateVersionRow.bank_id == bank_id,
                                                          TemplateVersionRow.content_hash == content_hash))
    return None if row is None else TemplateVersionPublic.model_validate(row)


def add_template_version(session: Session, bank_id: int, template: Template, *,
                         created_by: str) -> TemplateVersionPublic:
    """Store ``template`` as a new immutable version of ``template.id`` in the bank.

    Idempotent: the same source under the same key returns the stored version. Its parent is
    the version whose hash is ``template.provenance.parent_hash`` when given, else the key's
    latest version. Raises `VersionConflictError` when the same source is stored under another
    key or the named parent is not in the bank.
    """
    content_hash = template.content_hash
    existing = find_version(session, bank_id, content_hash)
    if existing is not None:
        if existing.template_key != template.id:
            raise VersionConflictError(f"this source is stored already as template {existing.template_key!r} "
                                       f"(version {content_hash[:12]}); give it the same id")
        return existing
    if template.provenance.parent_hash is not None:
        parent = find_version(session, bank_id, template.provenance.parent_hash)
        if parent is None:
            raise VersionConflictError(f"parent version {template.provenance.parent_hash[:12]} is not in the bank")
        parent_id: int | None = parent.id
    else:
        latest = _latest_of_key(session, bank_id, template.id)
        parent_id = None if latest is None else latest.id
    row = TemplateVersionRow(
        bank_id=bank_id, template_key=template.id, content_hash=content_hash, kind=template.kind,
        source=template.source,
        title=template.title, category=template.category, concepts=list(template.concepts), handler=template.handler,
        difficulty=template.difficulty, rationale=template.rationale,
        provenance=template.provenance.model_dump(mode="json"), parent_version_id=parent_id, created_by=created_by,
    )
    session.add(row)
    session.flush()
    summary_on_new_version(session, row)
    return TemplateVersionPublic.model_validate(row)


def get_version(session: Session, version_id: int) -> TemplateVersionPublic:
    row = session.get(TemplateVersionRow, version_id)
    if row is None:
        raise NotFoundError(f"no template version with id {version_id}")
    return TemplateVersionPublic.model_validate(row)


def list_versions(session: Session, bank_id: int, template_key: str | None = None) -> list[TemplateVersionPublic]:
    """The bank's versions, oldest first (optionally of one template)."""
    query = select(TemplateVersionRow).where(TemplateVersionRow.bank_id == bank_id)
    if template_key is not None:
        query = query.where(TemplateVersionRow.template_key == template_key)
    return [TemplateVersionPublic.model_validate(r) for r in session.scalars(query.order_by(TemplateVersionRow.id))]
