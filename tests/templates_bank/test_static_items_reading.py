"""Rows streamed from a JSON array or JSON lines: values past the buffer's edge, a row too deep to
parse skipped with its column named, a syntax error naming its row, and markers for what JSON
accepts and no item holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemsmith.templates_bank.static_items import reading
from itemsmith.templates_bank.static_items.reading import RowError, Unrepresentable, read_json_rows


def test_an_array_streams_rows_longer_than_the_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "_CHUNK", 64)
    rows = [{"question": "q" * n, "ts": list(range(n))} for n in (1, 50, 300, 2)]
    path = tmp_path / "rows.json"
    path.write_text("  [\n" + " ,\n".join(json.dumps(r) for r in rows) + "\n]\n")
    assert list(read_json_rows(path)) == list(enumerate(rows, start=1))


def test_a_row_too_deep_is_skipped_with_its_column_and_the_next_row_still_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "_CHUNK", 1000)
    deep = '{"question": "q", "ts": ' + "[" * 50_000 + "]" * 50_000 + "}"
    path = tmp_path / "rows.json"
    path.write_text(f'[{{"a": 1}}, {deep}, {{"b": "]}}"}}]')
    read = list(read_json_rows(path))
    assert [n for n, _ in read] == [1, 2, 3]
    assert isinstance(read[1][1], RowError) and read[1][1].field == "ts"
    assert read[0][1] == {"a": 1} and read[2][1] == {"b": "]}"}


def test_a_syntax_error_in_an_array_names_its_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text('[{"a": 1}, {"b": 2,}, {"c": 3}]')
    rows = read_json_rows(path)
    assert next(rows) == (1, {"a": 1})
    with pytest.raises(RowError, match=r"rows.json: not valid JSON in row 2"):
        next(rows)


def test_json_lines_mark_what_no_item_holds(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"x": ' + "1" * 400 + ', "y": NaN, "z": -Infinity, "w": ' + "7" * 300 + '}\n\n{"x": 1} trailing\n')
    (first, row), (second, bad) = read_json_rows(path)
    assert (first, second) == (1, 3)
    assert isinstance(row["x"], Unrepresentable) and repr(row["x"]) == "<an integer of 400 digits>"
    assert repr(row["y"]) == "NaN" and repr(row["z"]) == "-Infinity" and row["w"] == int("7" * 300)
    assert isinstance(bad, RowError) and "extra data after the row" in str(bad)
