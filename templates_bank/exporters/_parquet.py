"""Streaming parquet writer shared by the Hugging Face and lm-eval exporters.

Rows are buffered ``rows_per_group`` at a time and written as one row group, so memory stays
flat; files are split every ``rows_per_shard`` rows and named ``test-00000-of-00003.parquet``
(the shard count follows from the manifest's item count). Output is deterministic: fixed
schema (`arrow_schema`), zstd, no timestamps (the footer names the pyarrow version that wrote it).
pyarrow is imported when parquet is written: the other formats do without it.

Row groups are built by Arrow's JSON reader (`_table`), not from Python lists: every
``pa.array`` of a list first asks whether it is a pandas array, and the first such question
imports pandas (a third of a second, more than the rest of the export). The reader gives the same
arrays, hence the same bytes; only the plot column (bytes, which JSON does not carry) is built
from a list, in an export with plots, where drawing or reading the plots costs far more.
"""

from __future__ import annotations

import io
import json
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


def _table(batch: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """The rows as a table of ``schema``: every column but the plots parsed from JSON lines by Arrow."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    images = [row["image"] for row in batch] if "image" in schema.names else None
    columns = schema.remove(schema.get_field_index("image")) if images is not None else schema
    lines = [(json.dumps({k: v for k, v in row.items() if k != "image"}, ensure_ascii=False, allow_nan=False)
              + "\n").encode("utf-8") for row in batch]
    # a block must hold whole lines; the chunks it splits the rows into are combined below
    read = pa_json.ReadOptions(block_size=max(len(line) for line in lines))
    parse = pa_json.ParseOptions(explicit_schema=columns, unexpected_field_behavior="error")
    table = pa_json.read_json(io.BytesIO(b"".join(lines)), read_options=read, parse_options=parse)
    if images is not None:
        table = table.append_column(schema.field("image"), pa.array(images, type=schema.field("image").type))
    return table.combine_chunks()


def write_parquet(rows: Iterator[ExportRow], folder: Path, total_rows: int, options: ExportOptions) -> list[Path]:
    """Write the rows into parquet shards under ``folder``; returns the files written."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema(options)
    paths = [folder / name for name in shard_names(total_rows, options)]
    shard, in_shard, written = 0, 0, 0
    writer = pq.ParquetWriter(paths[0], schema, compression="zstd", compression_level=3)
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        if batch:
            writer.write_table(_table(batch, schema), row_group_size=len(batch))
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
