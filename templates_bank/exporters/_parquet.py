"""Streaming parquet writer shared by the Hugging Face and lm-eval exporters.

Rows are buffered ``rows_per_group`` at a time and written as one row group, so memory stays
flat; files are split every ``rows_per_shard`` rows and named ``test-00000-of-00003.parquet``
(the shard count follows from the manifest's item count). Output is deterministic: fixed
schema (`arrow_schema`), zstd, no timestamps (the footer names the pyarrow version that wrote it).
pyarrow is imported when parquet is written: the other formats do without it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemsmith.items.hashing import canonical_json
from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._rows import ExportRow, parquet_record

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_schema", "shard_names", "write_parquet"]


def arrow_schema(options: ExportOptions) -> pa.Schema:
    """The parquet schema; with plots, an ``image`` column that `datasets` reads as an Image."""
    import pyarrow as pa

    series = pa.struct([("name", pa.string()), ("unit", pa.string()), ("derived", pa.string()),
                        ("values", pa.list_(pa.float64())), ("timestamps", pa.list_(pa.string()))])
    fields = [
        ("id", pa.string()), ("template_id", pa.string()), ("template_version", pa.string()), ("seed", pa.int64()),
        ("sample_index", pa.int32()), ("title", pa.string()), ("category", pa.string()),
        ("concepts", pa.list_(pa.string())), ("difficulty", pa.string()),
        ("handler", pa.struct([("name", pa.string()), ("sha256", pa.string())])),
        ("kind", pa.string()), ("question", pa.string()), ("context", pa.string()), ("options", pa.list_(pa.string())),
        ("answer_index", pa.int32()), ("answer", pa.string()), ("answer_text", pa.string()), ("rationale", pa.string()),
        ("series", pa.list_(series)), ("metadata", pa.string()), ("prompt", pa.string()),
    ]
    if not options.plots:
        return pa.schema(fields)
    hf_features = canonical_json({"info": {"features": {"image": {"_type": "Image"}}}})
    return pa.schema([*fields, ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())]))],
                     metadata={"huggingface": hf_features})


def shard_names(total_rows: int, options: ExportOptions, split: str = "test") -> list[str]:
    shards = max(1, math.ceil(total_rows / options.rows_per_shard))
    return [f"{split}-{i:05d}-of-{shards:05d}.parquet" for i in range(shards)]


def write_parquet(rows: Iterator[ExportRow], folder: Path, total_rows: int, options: ExportOptions) -> list[Path]:
    """Write the rows into parquet shards under ``folder``; returns the files written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

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
