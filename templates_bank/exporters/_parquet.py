"""Streaming parquet writer shared by the Hugging Face and lm-eval exporters.

Rows are buffered ``rows_per_group`` at a time and written as one row group, so memory stays
flat; files are split every ``rows_per_shard`` rows and named ``test-00000-of-00003.parquet``
(the shard count follows from the manifest's item count). Output is deterministic: fixed
schema, zstd, no timestamps (the footer names the pyarrow version that wrote it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._rows import ExportRow, arrow_schema, parquet_record

__all__ = ["shard_names", "write_parquet"]


def shard_names(total_rows: int, options: ExportOptions, split: str = "test") -> list[str]:
    shards = max(1, math.ceil(total_rows / options.rows_per_shard))
    return [f"{split}-{i:05d}-of-{shards:05d}.parquet" for i in range(shards)]


def write_parquet(rows: Iterator[ExportRow], folder: Path, total_rows: int, options: ExportOptions) -> list[Path]:
    """Write the rows into parquet shards under ``folder``; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema(options)
    paths = [folder / name for name in shard_names(total_rows, options)]
    shard, in_shard, written = 0, 0, 0
    writer = pq.ParquetWriter(paths[0], schema, compression="zstd", compression_level=3)
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=len(batch))
            batch.clear()

    try:
        for row in rows:
            if in_shard == options.rows_per_shard:
                if shard + 1 == len(paths):
                    raise RuntimeError(f"more rows than the {total_rows} the manifest counts")
                flush()
                writer.close()
                shard, in_shard = shard + 1, 0
                writer = pq.ParquetWriter(paths[shard], schema, compression="zstd", compression_level=3)
            batch.append(parquet_record(row, options))
            in_shard += 1
            written += 1
            if len(batch) == options.rows_per_group:
                flush()
        flush()
    finally:
        writer.close()
    if written != total_rows:
        raise RuntimeError(f"wrote {written} rows, the manifest counts {total_rows}")
    return paths
