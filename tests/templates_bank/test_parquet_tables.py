"""Parquet row groups are parsed by Arrow's JSON reader (`_parquet._table`), so that writing parquet
imports no pandas: the same tables, and the same parquet bytes, as `pa.Table.from_pylist` (how they
were built before), also on values a trip through JSON text could change."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemsmith.templates_bank.exporters import ExportOptions
from itemsmith.templates_bank.exporters._parquet import _table, arrow_schema

SERIES = [{"name": "température °C", "unit": "", "derived": None,
           "values": [0.1, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1e16, 1 / 3,
                      2.0**53 + 2, 3],
           "timestamps": None},
          {"name": "b", "unit": "m/s", "derived": "diff of a", "values": [1e-7, 2.5e+300],
           "timestamps": ["2024-01-01T00:00:00", "2024-01-02"]}]


def _row(i: int, *, plots: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"t-0-{i}", "template_id": "t", "template_version": "ab" * 32, "seed": 2**62 + i, "sample_index": i,
        "title": "quotes \" and \\ backslash\nnewline", "category": "arithmetic", "concepts": [] if i else ["a", "ü"],
        "difficulty": None if i else "hard", "handler": {"name": "synthetic", "sha256": "cd" * 32}, "kind": "mcq",
        "question": "😀 which day?\u2028\t", "context": "", "options": ["A) day 4", "", "x" * 3000],
        "answer_index": 0, "answer": "A", "answer_text": "A) day 4", "rationale": "\x7f\u00a0",
        "series": SERIES if i % 2 == 0 else [], "metadata": '{"k":"ü","n":[1,2.5]}', "prompt": "p\r\nq",
    }
    if plots:
        row["image"] = None if i == 1 else {"bytes": bytes(range(256)) * (i + 1), "path": f"t-0-{i}.png"}
    return row


def _parquet(table: pa.Table, schema: pa.Schema, path: Path) -> bytes:
    with pq.ParquetWriter(path, schema, compression="zstd", compression_level=3) as writer:
        writer.write_table(table, row_group_size=len(table))
    return path.read_bytes()


@pytest.mark.parametrize("plots", [False, True])
def test_tables_parsed_from_json_are_those_built_from_the_rows(plots: bool, tmp_path: Path) -> None:
    schema = arrow_schema(ExportOptions(plots=plots))
    rows = [_row(i, plots=plots) for i in range(4)]
    built = pa.Table.from_pylist(copy.deepcopy(rows), schema=schema)
    parsed = _table(copy.deepcopy(rows), schema)
    assert parsed.schema.equals(schema, check_metadata=False) and parsed.equals(built)
    values = parsed.column("series")[0].as_py()[0]["values"]
    assert str(values[1]) == "-0.0" and values[2] == 5e-324 and values[7] == 2.0**53 + 2
    assert _parquet(parsed, schema, tmp_path / "parsed.parquet") == _parquet(built, schema, tmp_path / "built.parquet")


def test_a_row_with_a_field_the_schema_lacks_is_refused() -> None:
    schema = arrow_schema(ExportOptions())
    with pytest.raises(pa.ArrowInvalid):
        _table([{**_row(0, plots=False), "extra": 1}], schema)
