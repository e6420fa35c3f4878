"""Liveness and readiness (no API key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import text

from itemsmith.api.deps import SessionDep, SettingsDep
from itemsmith.api.settings import ApiSettings
from itemsmith.api.text_fields import TextCheckedRoute
from itemsmith.sandbox import ALL_LAYERS, SandboxError, isolation_report
from itemsmith.service.jobs import alive_workers
from itemsmith.templates_bank.storage import current_revision, head_revision

router = APIRouter(tags=["health"], route_class=TextCheckedRoute)


class SandboxHealth(BaseModel):
    """The sandbox's OS isolation layers, probed once per process (a child forked as for a run)."""

    active: list[str]
    missing: list[str] = Field(description="required (ITEMSMITH_SANDBOX_REQUIRED_LAYERS) but not active")
    allow_degraded: bool
    errors: dict[str, str]


class WorkersHealth(BaseModel):
    """Who runs jobs: the API itself (``inprocess``), or Celery workers, counted by their beats."""

    runner: str
    alive: int | None = Field(description="live job workers (Celery: those that beat within 15 s); None: unknown")
    error: str | None = Field(None, description="why the count is unknown (the broker is away)")


class Health(BaseModel):
    status: str = Field(description="ok, needs-migration, sandbox-degraded (a required sandbox layer is missing), "
                                    "or no-workers (Celery jobs, and no worker alive or the broker away)")
    schema_revision: str | None
    expected_revision: str
    sandbox: SandboxHealth
    workers: WorkersHealth


def _sandbox_health() -> SandboxHealth:
    try:
        report = isolation_report()
    except SandboxError as exc:  # no worker starts at all
        return SandboxHealth(active=[], missing=list(ALL_LAYERS), allow_degraded=False, errors={"worker": str(exc)})
    return SandboxHealth(active=[layer for layer in report.active if layer in report.verified],
                         missing=sorted({*report.missing, *report.unverified}), allow_degraded=report.allow_degraded,
                         errors=report.errors)


def _workers_health(settings: ApiSettings) -> WorkersHealth:
    if settings.job_runner != "celery":
        return WorkersHealth(runner=settings.job_runner, alive=1)
    try:
        return WorkersHealth(runner="celery", alive=alive_workers(settings.redis_url))
    except Exception as exc:  # noqa: BLE001 - any broker failure: the count is unknown, health still answers
        return WorkersHealth(runner="celery", alive=None, error=f"{type(exc).__name__}: {exc}"[:300])


@router.get("/health")
def health(session: SessionDep, settings: SettingsDep) -> Health:
    """The database answers and is migrated to this itemsmith's schema; which sandbox layers are active."""
    session.execute(text("SELECT 1"))
    current, head = current_revision(session.get_bind()), head_revision()
    sandbox = _sandbox_health()
    workers = _workers_health(settings)
    status = "ok" if current == head else "needs-migration"
    if status == "ok" and sandbox.missing:
        status = "sandbox-degraded"
    if status == "ok" and not workers.alive:
        status = "no-workers"
    return Health(status=status, schema_revision=current, expected_revision=head, sandbox=sandbox, workers=workers)
