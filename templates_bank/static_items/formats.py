"""Reading an existing benchmark's rows into items: the TimeSeriesExam adapter, JSON lines with a
column mapping, and a local Hugging Face dataset.

Every reader yields (row number, raw row); `normalize` turns a raw row into an `ImportedRow` or
says, for that row, what is wrong and in which of its columns (a key that is not one of the
options, no series, a value of the wrong type, a number no item can hold, text holding a NUL
character, which PostgreSQL cannot store). Nothing is stored here.

- ``tse``: TimeSeriesExam's ``qa_dataset.json`` as published (a JSON array, or JSON lines):
  ``question``, ``options`` (text and bare numbers, mixed in one list: each option is kept as the
  text it displays, a number as the file writes it, 4.28 -> "4.28"), ``answer`` (the key's text or
  number, matched by the same rule, else by value), ``question_type`` (``multiple_choice`` /
  ``multiple-choice`` / ``binary``), ``ts`` or ``ts1``/``ts2`` (float lists without timestamps or
  units), ``tid`` and ``category`` (the group: the file numbers its templates per category, so
  ``tid`` 50 of two categories is two groups), ``subcategory``, ``difficulty``,
  ``relevant_concepts``.
- ``jsonl``: one JSON object a line (or a JSON array) with ``question``, ``options``, ``answer``
  (text, or an index with ``answer=`` mapped to an ``answer_index`` column), ``series`` (a list
  of numbers, a list of lists, or names to lists), ``group``, ``category``; ``--map
  question=q,options=choices,series=ts1+ts2,...`` renames them.
- ``hf``: a dataset saved with ``save_to_disk`` (a folder), or a local ``.parquet`` / ``.json`` /
  ``.jsonl`` file, read with ``datasets`` (``PATH[:split]``); columns as for ``jsonl``. Loading from
  the Hub is not supported: download the dataset first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from itemsmith.items.schema import Item, ItemKind, Series
from itemsmith.templates_bank.static_items.reading import (
    RowError,
    Unrepresentable,
    local_source,
    read_json_rows,
    shown,
)

__all__ = ["FIELDS", "FORMATS", "ImportFormat", "ImportedRow", "RowError", "column", "local_source", "normalize",
           "number_text", "parse_mapping", "read_rows"]

ImportFormat = Literal["tse", "jsonl", "hf"]
# The fields a row is read into; `--map FIELD=COLUMN` (series may name several columns, joined by +).
FIELDS = ("question", "options", "answer", "answer_index", "series", "group", "category", "kind", "difficulty",
          "concepts")
_DIFFICULTIES = {"easy", "medium", "hard"}
# the TimeSeriesExam columns of the fields that it names otherwise
_TSE_COLUMNS = {"answer": "answer", "answer_index": "answer", "series": "ts", "group": "tid", "kind": "question_type",
                "concepts": "relevant_concepts"}


def column(fmt: ImportFormat, mapping: Mapping[str, list[str]], field: str) -> str:
    """The file's column (columns, joined by +) that a field is read from."""
    if fmt == "tse":
        return _TSE_COLUMNS.get(field, field)
    return "+".join(mapping.get(field, [field]))


class ImportedRow(BaseModel):
    """One row as an item, with the group and category it belongs to."""

    model_config = ConfigDict(extra="forbid")

    row: int
    group: str
    category: str
    item: Item
    difficulty: Literal["easy", "medium", "hard"] | None = None
    concepts: list[str] = []


def parse_mapping(text: str | None) -> dict[str, list[str]]:
    """``question=q,options=choices,series=ts1+ts2`` -> {field: [columns]} (ValueError when malformed)."""
    mapping: dict[str, list[str]] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        field, sep, columns = part.partition("=")
        field = field.strip()
        if not sep or not columns.strip():
            raise ValueError(f"--map {part!r}: write FIELD=COLUMN (e.g. question=prompt)")
        if field not in FIELDS:
            raise ValueError(f"--map {field!r}: the fields are {', '.join(FIELDS)}")
        mapping[field] = [c.strip() for c in columns.split("+") if c.strip()]
    return mapping


def _hf_rows(spec: str) -> Iterator[tuple[int, Any]]:
    try:
        import datasets
    except ImportError:
        raise RowError("--format hf needs the `datasets` package: pip install datasets") from None
    source, split = local_source(spec, hf=True)
    path = str(source)
    if not source.exists():
        raise RowError(f"{path}: no such local dataset (a saved dataset folder, or a .parquet/.json/.jsonl file; "
                       "the Hub cannot be reached from here: download the dataset first)")
    if source.is_dir():
        loaded = datasets.load_from_disk(str(source))
    else:
        builder = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}.get(source.suffix)
        if builder is None:
            raise RowError(f"{path}: --format hf reads a saved dataset folder or a .parquet/.json/.jsonl file")
        loaded = datasets.load_dataset(builder, data_files=str(source))
    if isinstance(loaded, datasets.DatasetDict):
        if not split:
            split = "train" if "train" in loaded else next(iter(loaded))
        if split not in loaded:
            raise RowError(f"{path}: no split {split!r} (splits: {', '.join(loaded)})")
        loaded = loaded[split]
    yield from enumerate(loaded, start=1)


def read_rows(fmt: ImportFormat, source: str) -> Iterator[tuple[int, Any]]:
    """The raw rows of `source` in `fmt`, numbered and streamed (a `RowError` as a row: that row is unreadable)."""
    return _hf_rows(source) if fmt == "hf" else read_json_rows(Path(source))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def number_text(value: int | float) -> str:
    """A JSON number as the file shows it (Python's shortest round-trip form: 4.28 -> "4.28", 7 -> "7")."""
    return repr(value) if isinstance(value, float) else str(value)


def _option_text(value: Any, position: int, field: str) -> str:
    if isinstance(value, str):
        return value
    number = _number(value)
    if number is None:
        raise RowError(f"option {position} is {shown(value)}: an option is text or a number", field)
    if not math.isfinite(number):
        raise RowError(f"option {position} is {shown(value)}: not a finite number", field)
    return number_text(value)


def _option_texts(options: Any, field: str) -> list[str]:
    """The options as the texts they display: text as it is, a number as the file writes it."""
    if not isinstance(options, list) or not options:
        raise RowError(f"options must be a non-empty list, got {shown(options)}", field)
    return [_option_text(o, i, field) for i, o in enumerate(options)]


def _as_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _key_index(answer: Any, texts: list[str], field: str) -> int:
    """The option the answer names: the same text (a number as its text), else the same number."""
    if isinstance(answer, str):
        wanted = answer.strip()
    elif _number(answer) is not None and math.isfinite(answer):
        wanted = number_text(answer)
    else:
        raise RowError(f"the answer {shown(answer)} is neither text nor a finite number", field)
    matches = [i for i, t in enumerate(texts) if t.strip() == wanted]
    if not matches and (value := _as_number(wanted)) is not None:
        matches = [i for i, t in enumerate(texts) if _as_number(t) == value]
    if not matches:
        raise RowError(f"the answer {shown(answer)} is not one of its options {shown(texts)}", field)
    return matches[0]


def _values(name: str, values: Any, field: str) -> list[float]:
    if not isinstance(values, list) or not values:
        raise RowError(f"series {name!r} must be a non-empty list of numbers", field)
    numbers = [_number(v) for v in values]
    bad = next((i for i, n in enumerate(numbers) if n is None), None)
    if bad is not None and isinstance(values[bad], Unrepresentable):
        raise RowError(f"series {name!r} holds {values[bad]!r} at position {bad}: not a finite number a float can "
                       "hold", field)
    if bad is not None:
        raise RowError(f"series {name!r} holds a non-number at position {bad} ({shown(values[bad])}): mixed types",
                       field)
    if not all(math.isfinite(n) for n in numbers):  # type: ignore[arg-type]
        raise RowError(f"series {name!r} holds NaN or infinity; fill or drop the missing values", field)
    return numbers  # type: ignore[return-value]


def _series(columns: Mapping[str, Any]) -> list[Series]:
    """Series from the mapped columns: one list of numbers each, or one column of lists / names."""
    series: list[Series] = []
    for column, value in columns.items():
        if isinstance(value, dict):
            series += [Series(name=str(k), values=_values(str(k), v, column)) for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            series += [Series(name=f"series {i}", values=_values(f"{column}[{i - 1}]", v, column))
                       for i, v in enumerate(value, start=1)]
        else:
            series.append(Series(name=column, values=_values(column, value, column)))
    return series


def _field(row: Mapping[str, Any], mapping: Mapping[str, list[str]], field: str) -> Any:
    return row.get(mapping.get(field, [field])[0])


def _jsonl_row(number: int, row: Mapping[str, Any], mapping: Mapping[str, list[str]]) -> ImportedRow:
    of = partial(column, "jsonl", mapping)
    columns = mapping.get("series", ["series"])
    present = {c: row[c] for c in columns if row.get(c) is not None}
    if not present:
        raise RowError(f"no series (column {' or '.join(repr(c) for c in columns)})", of("series"))
    answer = _field(row, mapping, "answer")
    index = _field(row, mapping, "answer_index")
    texts = _option_texts(_field(row, mapping, "options"), of("options"))
    if index is not None and answer is None:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(texts):
            raise RowError(f"answer_index {index!r} is not an option's position (0..{len(texts) - 1})",
                           of("answer_index"))
        key = index
    elif answer is not None:
        key = _key_index(answer, texts, of("answer"))
    else:
        raise RowError("no answer (give the key's text as 'answer' or its position as 'answer_index')", of("answer"))
    group, category = _field(row, mapping, "group"), _field(row, mapping, "category")
    kind = _field(row, mapping, "kind") or ("tf" if len(texts) == 2 else "mc")
    difficulty = _field(row, mapping, "difficulty")
    concepts = _field(row, mapping, "concepts") or []
    return _imported(number, group, category, texts, key, kind, _series(present), difficulty, concepts,
                     metadata={"source_row": number}, question=_field(row, mapping, "question"), of=of)


def _text(value: Any, what: str, field: str, *, numbers: bool = False) -> str | None:
    """An optional text field as text (`numbers`: a whole number too, as an id); RowError otherwise."""
    if value is None or isinstance(value, str):
        return value
    if numbers and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RowError(f"{what} must be text{' or a whole number' if numbers else ''}, got {shown(value)}", field)


def _imported(number: int, group: Any, category: Any, texts: list[str], key: int, kind: Any,
              series: list[Series], difficulty: Any, concepts: Any, *, metadata: dict[str, Any],
              question: Any, of: Callable[[str], str]) -> ImportedRow:
    """The row's item; `of` names the file's column of a field (for the errors)."""
    group = _text(group, "the group (template) id", of("group"), numbers=True)
    if group is None or group.strip() == "":
        raise RowError("no group (template) id", of("group"))
    category = _text(category, "the category", of("category"))
    difficulty = _text(difficulty, "the difficulty", of("difficulty"))
    if not isinstance(kind, str) or kind not in _KINDS:
        raise RowError(f"kind {shown(kind)}: use mc, tf or pz", of("kind"))
    if not isinstance(concepts, list) or not all(isinstance(c, str) for c in concepts):
        raise RowError(f"concepts must be a list of strings, got {shown(concepts)}", of("concepts"))
    if not isinstance(question, str):
        raise RowError(f"the question must be text, got {shown(question)}", of("question"))
    level = difficulty.strip().casefold() if difficulty is not None else None
    if difficulty is not None:
        metadata["difficulty"] = difficulty
    try:
        item = Item(question=question, options=texts, answer_index=key, kind=ItemKind(kind), series=series,
                    metadata=metadata)
    except ValidationError as exc:
        errors = exc.errors()
        raise RowError("; ".join(f"{'.'.join(map(str, e['loc'])) or 'item'}: {e['msg']}" for e in errors),
                       of(str(errors[0]["loc"][0])) if errors[0]["loc"] else None) from None
    return ImportedRow(row=number, group=group, category=category or "uncategorized", item=item,
                       difficulty=level if level in _DIFFICULTIES else None, concepts=list(concepts))


_KINDS = frozenset(k.value for k in ItemKind)
_TSE_KINDS = {"multiple_choice": "mc", "multiple-choice": "mc", "binary": "tf"}
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def tse_group(category: str | None, tid: str) -> str:
    """A TimeSeriesExam row's group: its category and ``tid`` together (the file numbers templates per category)."""
    slug = _NOT_SLUG.sub("-", (category or "uncategorized").casefold()).strip("-")[:80]
    return f"tse-{slug}-{tid}"


def _tse_normalize(number: int, row: Mapping[str, Any], mapping: Mapping[str, list[str]]) -> ImportedRow:
    of = partial(column, "tse", mapping)
    question_type = row.get("question_type")
    if not isinstance(question_type, str) or question_type not in _TSE_KINDS:
        raise RowError(f"question_type {shown(question_type)}: TimeSeriesExam uses {', '.join(_TSE_KINDS)}",
                       "question_type")
    if row.get("ts") is not None:
        series = [Series(name="series", values=_values("ts", row["ts"], "ts"))]
    elif row.get("ts1") is not None and row.get("ts2") is not None:
        series = [Series(name="series 1", values=_values("ts1", row["ts1"], "ts1")),
                  Series(name="series 2", values=_values("ts2", row["ts2"], "ts2"))]
    else:
        raise RowError("no series ('ts', or both 'ts1' and 'ts2')", "ts")
    texts = _option_texts(row.get("options"), "options")
    key = _key_index(row.get("answer"), texts, "answer")
    kind = _TSE_KINDS[question_type]
    if kind == "tf" and len(texts) != 2:
        kind = "mc"  # a "binary" question offering more than two options
    tid = _text(row.get("tid"), "tid", "tid", numbers=True)
    category = _text(row.get("category"), "the category", "category")
    metadata: dict[str, Any] = {"source_row": number, "tid": row.get("tid"), "question_type": question_type}
    if (subcategory := _text(row.get("subcategory"), "the subcategory", "subcategory")) is not None:
        metadata["subcategory"] = subcategory
    return _imported(number, None if tid is None else tse_group(category, tid), category, texts, key, kind, series,
                     row.get("difficulty"), row.get("relevant_concepts") or [], metadata=metadata,
                     question=row.get("question"), of=of)


FORMATS: dict[ImportFormat, Callable[[int, Mapping[str, Any], Mapping[str, list[str]]], ImportedRow]] = {
    "tse": _tse_normalize,
    "jsonl": _jsonl_row,
    "hf": _jsonl_row,
}


_SCALARS = (int, float, bool, type(None), Unrepresentable)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    return isinstance(value, list) and any(_holds_nul(v) for v in value if not isinstance(v, _SCALARS))


def normalize(fmt: ImportFormat, number: int, row: Any, mapping: Mapping[str, list[str]]) -> ImportedRow:
    """One raw row as an `ImportedRow`; `RowError` saying what is wrong with it."""
    if isinstance(row, RowError):
        raise row
    if not isinstance(row, Mapping):
        raise RowError(f"a row is a JSON object, got {shown(row)}")
    for key, value in row.items():
        try:
            nul = _holds_nul(key) or _holds_nul(value)
        except RecursionError:
            raise RowError("the value is nested too deeply", str(key)) from None
        if nul:
            raise RowError("text must not contain NUL (U+0000) characters", str(key))
    return FORMATS[fmt](number, row, mapping)
