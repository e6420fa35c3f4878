"""The bank layer's settings: where the bank lives (``ITEMSMITH_*``) and how its diversity
summaries compare texts (``ITEMSMITH_DIVERSITY_*``).

``ITEMSMITH_DATABASE_URL`` (e.g. ``postgresql://user@host/db``, needs the ``postgres`` extra)
wins; otherwise the bank is the SQLite file ``<ITEMSMITH_DATA_DIR>/itemsmith.sqlite``, with the
data directory defaulting to ``$XDG_DATA_HOME/itemsmith`` (``~/.local/share/itemsmith``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.layer_settings import LayerSettings

__all__ = ["BankSettings", "DiversityConfig"]


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "itemsmith"


class DiversityConfig(BaseModel):
    """Which sentence embedder the diversity summaries use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    embedder: Literal["minilm", "off"] = Field(
        "minilm", description="sentence embedder of the diversity summaries (minilm needs the diversity extra)")


class BankSettings(LayerSettings):
    """The bank layer's settings, read from the environment: its database and its diversity summaries."""

    database_url: str | None = Field(None, description="SQLAlchemy URL; default: a SQLite file in data_dir")
    data_dir: Path = Field(default_factory=_default_data_dir,
                           description="the SQLite file and uploads live here; default $XDG_DATA_HOME/itemsmith "
                                       "(~/.local/share/itemsmith)")
    pool_size: int = Field(10, ge=1, le=1000, description="connections the engine keeps open (not SQLite in memory)")
    max_overflow: int = Field(10, ge=0, le=1000, description="connections opened beyond pool_size under load")
    pool_timeout_s: float = Field(10.0, gt=0, description="how long a request waits for a free connection before "
                                                            "it fails")
    sqlite_busy_timeout_s: float = Field(60.0, gt=0, le=3600, description="SQLite only: how long a write waits "
                                         "for another one to commit before it fails with 'database is locked'")
    diversity: DiversityConfig = Field(default_factory=DiversityConfig, description="the diversity summaries")

    @property
    def url(self) -> str:
        """The configured URL, or ``sqlite:///<data_dir>/itemsmith.sqlite``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'itemsmith.sqlite'}"
