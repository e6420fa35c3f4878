"""Where the bank lives, configurable through ``ITEMSMITH_*`` environment variables.

``ITEMSMITH_DATABASE_URL`` (e.g. ``postgresql://user@host/db``, needs the ``postgres`` extra)
wins; otherwise the bank is the SQLite file ``<ITEMSMITH_DATA_DIR>/itemsmith.sqlite``, with the
data directory defaulting to ``$XDG_DATA_HOME/itemsmith`` (``~/.local/share/itemsmith``).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["StorageSettings"]


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "itemsmith"


class StorageSettings(BaseSettings):
    """The database URL of the template bank."""

    model_config = SettingsConfigDict(env_prefix="ITEMSMITH_", extra="ignore")

    database_url: str | None = Field(None, description="SQLAlchemy URL; default: a SQLite file in data_dir")
    data_dir: Path = Field(default_factory=_default_data_dir,
                           description="the SQLite file and uploads live here; default $XDG_DATA_HOME/itemsmith "
                                       "(~/.local/share/itemsmith)")
    pool_size: int = Field(10, ge=1, le=1000, description="connections the engine keeps open (not SQLite in memory)")
    max_overflow: int = Field(10, ge=0, le=1000, description="connections opened beyond pool_size under load")
    pool_timeout_s: float = Field(10.0, gt=0, description="how long a request waits for a free connection before "
                                                            "it fails")

    @property
    def url(self) -> str:
        """The configured URL, or ``sqlite:///<data_dir>/itemsmith.sqlite``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'itemsmith.sqlite'}"
