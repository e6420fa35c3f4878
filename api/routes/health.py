"""Liveness and readiness (no API key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import text

from itemsmith.api.deps import SessionDep
from itemsmith.templates_bank.storage import current_revision, head_revision

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    schema_revision: str | None
    expected_revision: str


@router.get("/health")
def health(session: SessionDep) -> Health:
    """The database answers and is migrated to this itemsmith's schema."""
    session.execute(text("SELECT 1"))
    current, head = current_revision(session.get_bind()), head_revision()
    return Health(status="ok" if current == head else "needs-migration", schema_revision=current,
                  expected_revision=head)
