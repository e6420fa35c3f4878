"""API keys: created by ``itemsmith keys create``, stored as sha256 hashes, checked per request.

A key is 32 random bytes (``ism_`` + urlsafe base64), so a plain sha256 is enough to store it:
there is nothing to brute-force, and lookup by hash needs no per-key salt.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from itemsmith.service.tables import ApiKeyRow
from itemsmith.templates_bank.storage import NotFoundError, utcnow

__all__ = ["ApiKeyPublic", "Principal", "authenticate", "create_key", "list_keys", "revoke_key"]

KEY_PREFIX = "ism_"


class Principal(BaseModel):
    """Who a request acts for: the owner of the key it carried."""

    owner: str
    key_id: int


class ApiKeyPublic(BaseModel):
    id: int
    owner: str
    name: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _public(row: ApiKeyRow) -> ApiKeyPublic:
    return ApiKeyPublic(id=row.id, owner=row.owner, name=row.name, prefix=row.prefix,
                        created_at=row.created_at, revoked_at=row.revoked_at)


def create_key(session: Session, owner: str, name: str = "") -> tuple[str, ApiKeyPublic]:
    """A new key for ``owner``: the plain key (shown once, never stored) and its record."""
    if not owner.strip():
        raise ValueError("an API key needs an owner")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKeyRow(owner=owner.strip(), name=name, prefix=key[:10], key_hash=_hash(key))
    session.add(row)
    session.flush()
    return key, _public(row)


def authenticate(session: Session, key: str) -> Principal | None:
    """The principal of a live key; None for an unknown or revoked key."""
    row = session.scalar(select(ApiKeyRow).where(ApiKeyRow.key_hash == _hash(key)))
    if row is None or row.revoked_at is not None:
        return None
    return Principal(owner=row.owner, key_id=row.id)


def list_keys(session: Session, owner: str | None = None) -> list[ApiKeyPublic]:
    query = select(ApiKeyRow).order_by(ApiKeyRow.id)
    if owner is not None:
        query = query.where(ApiKeyRow.owner == owner)
    return [_public(row) for row in session.scalars(query)]


def revoke_key(session: Session, key_id: int) -> ApiKeyPublic:
    row = session.get(ApiKeyRow, key_id)
    if row is None:
        raise NotFoundError(f"no API key with id {key_id}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return _public(row)
