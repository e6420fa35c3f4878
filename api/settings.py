"""The service's settings (``ITEMSMITH_API_*`` environment variables).

The bank database itself is configured by `templates_bank.settings.StorageSettings`
(``ITEMSMITH_DATABASE_URL`` / ``ITEMSMITH_DATA_DIR``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from itemsmith.templates_bank.settings import StorageSettings

__all__ = ["ApiSettings"]


class ApiSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ITEMSMITH_API_", extra="ignore")

    database_url: str = Field(default_factory=lambda: StorageSettings().url,
                              description="the bank database (default: ITEMSMITH_DATABASE_URL or the SQLite file)")
    uploads_dir: Path = Field(default_factory=lambda: StorageSettings().data_dir / "uploads",
                              description="where uploaded handler sources and data files are kept")
    job_runner: Literal["inprocess", "celery"] = Field(
        "inprocess", description="inprocess: jobs run in threads of the API process; celery: on Celery workers")
    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Celery broker and result backend")
    max_upload_bytes: int = Field(50 * 1024 * 1024, ge=1, description="cap on one POST /banks request's files")
    max_handler_source_bytes: int = Field(256 * 1024, ge=1)
    model_providers: list[str] = Field(
        ["openai", "anthropic", "openai_compatible", "local"],
        description="providers a request may name; `scripted` (recorded replies read from a server file) is for "
                    "tests only")
    job_lease_s: float = Field(60.0, gt=0, description="a running job's lease; renewed while its worker lives")
