"""The service's settings (``ITEMSMITH_API_*`` environment variables), read by the REST API,
the job runners and the Celery workers alike.

The database is not configured here: the CLI, the server and the workers all use the bank's one
setting, `templates_bank.settings.BankSettings` (``ITEMSMITH_DATABASE_URL``, else the SQLite
file in ``ITEMSMITH_DATA_DIR``). ``database_url`` below defaults to it and can be given only in
code (``ServiceSettings(database_url=...)``, what ``itemsmith serve --db`` does), never from an
``ITEMSMITH_API_*`` variable, so the server and its workers cannot disagree about the database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from itemsmith.agents.llm.providers import SpecPolicy
from itemsmith.layer_settings import LayerSettings
from itemsmith.templates_bank.settings import BankSettings

__all__ = ["ServiceSettings", "request_policy"]

class ServiceSettings(LayerSettings):
    """The service layer's settings, read from the environment (all of them the API's: ``ITEMSMITH_API_*``)."""

    model_config = SettingsConfigDict(env_prefix="ITEMSMITH_API_")
    code_only = frozenset({"database_url"})

    database_url: str = Field(default_factory=lambda: BankSettings().url,
                              description="the bank database: ITEMSMITH_DATABASE_URL or the SQLite file (code only)")
    uploads_dir: Path = Field(default_factory=lambda: BankSettings().data_dir / "uploads",
                              description="where uploaded handler sources and data files are kept")
    job_runner: Literal["inprocess", "celery"] = Field(
        "inprocess", description="inprocess: jobs run in threads of the API process; celery: on Celery workers")
    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Celery broker and result backend")
    max_upload_bytes: int = Field(50 * 1024 * 1024, ge=1, description="cap on one upload's files (POST /banks, "
                                                                      "POST /banks/imports, POST /banks/{id}/imports)")
    max_handler_source_bytes: int = Field(256 * 1024, ge=1, description="cap on an uploaded handler's source")
    handler_check_s: float = Field(10.0, gt=0, le=600, description="how long loading an uploaded handler in the "
                                                                   "sandbox may take before the upload is refused (422)")
    max_request_bytes: int = Field(1024 * 1024, ge=1, description="cap on the body of any other request")
    model_providers: list[str] = Field(
        ["openai", "anthropic", "openai_compatible", "local"],
        description="providers a request may name; `openai_compatible` only by the name of an endpoint of "
                    "ITEMSMITH_ENDPOINTS; `scripted` (recorded replies from ITEMSMITH_SCRIPTED_DIR) is for tests "
                    "only")
    job_lease_s: float = Field(60.0, gt=0, description="a running job's lease; renewed while its worker lives")
    job_db_retry_s: float = Field(60.0, ge=0, description="how long a job's progress and status writes retry a "
                                                         "transient database error (a restart) before giving up")
    job_transient_attempts: int = Field(5, ge=1, description="claims of a job whose code keeps meeting transient "
                                                            "database errors before it is marked failed")
    db_request_slots: int | None = Field(None, ge=1, description="requests that hold a database session at once "
                                                                "(default: ITEMSMITH_POOL_SIZE; the overflow is left "
                                                                "to in-process jobs and key checks)")
    db_wait_s: float = Field(10.0, gt=0, description="how long a request waits for a session slot before a 503")
    sample_workers: int = Field(4, ge=1, le=64, description="sandbox workers per handler for review samples")
    sample_runs_per_owner: int = Field(2, ge=1, le=64, description="sample runs one owner has at once")
    sample_queue_per_owner: int = Field(4, ge=0, le=1000, description="sample requests one owner may have "
                                                                     "waiting; more get a 503")
    sample_wait_s: float = Field(30.0, gt=0, description="how long a sample request waits for a sandbox slot "
                                                         "before a 503")


def request_policy(settings: ServiceSettings | None = None) -> SpecPolicy:
    """What a model spec in a service request may name, checked when the request arrives and again
    when its job builds the models (a job queued under an older configuration gets no more)."""
    return SpecPolicy.service((settings or ServiceSettings()).model_providers)
