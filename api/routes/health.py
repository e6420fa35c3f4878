"""Liveness and readiness (no API key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import text

from itemsmith.api.deps import SessionDep
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.sandbox import ALL_LAYERS, SandboxError, isolation_report
from itemsmith.templates_bank.storage import current_revision, head_revision

router = APIRouter(tags=["health"], route_class=TextCheckedRoute)


class SandboxHealth(BaseModel):
    """The sandbox's OS isolation layers, probed once per process (a child forked as for a run)."""

    active: list[str]
    missing: list[str] = Field(description="required (ITEMSMITH_SANDBOX_REQUIRED_LAYERS) but not active")
    allow_degraded: bool
    errors: dict[str, str]


class Health(BaseModel):
    status: str = Field(description="ok, needs-migration, or sandbox-degraded (a required sandbox layer is missing)")
    schema_revision: str | None
    expected_revision: str
    sandbox: SandboxHealth


def _sandbox_health() -> SandboxHealth:
    try:
        report = isolation_report()
    except SandboxError as exc:  # no worker starts at all
        return SandboxHealth(active=[], missing=list(ALL_LAYERS), allow_degraded=False, errors={"worker": str(exc)})
    return SandboxHealth(active=[layer for layer in report.active if layer in report.verified],
                         missing=sorted({*report.missing, *report.unverified}), allow_degraded=report.allow_degraded,
                         errors=report.errors)


@router.get("/health")
def health(session: SessionDep) -> Health:
    """The database answers and is migrated to this itemsmith's schema; which sandbox layers are active."""
    session.execute(text("SELECT 1"))
    current, head = current_revision(session.get_bind()), head_revision()
    sandbox = _sandbox_health()
    status = "ok" if current == head else "needs-migration"
    if status == "ok" and sandbox.missing:
        status = "sandbox-degraded"
    return Health(status=status, schema_revision=current, expected_revision=head, sandbox=sandbox)
