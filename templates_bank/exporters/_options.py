"""Options every exporter shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.rendering import TextFormat

__all__ = ["ExportOptions"]


class ExportOptions(BaseModel):
    """How items are written. Exports are deterministic given the release and these options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text_format: TextFormat = Field(TextFormat.plain, description="format of the series in the rendered prompt")
    decimals: int = Field(2, ge=0, le=10, description="decimals of the series in the rendered prompt")
    plots: bool = Field(False, description="also write a PNG plot of each item's series")
    plot_dpi: int = Field(100, ge=30, le=300)
    rows_per_group: int = Field(1000, ge=1, le=100_000, description="parquet row group size (rows held in memory)")
    rows_per_shard: int = Field(50_000, ge=1, description="rows per parquet file")
    license: str = Field("other", description="license written into the dataset card")
