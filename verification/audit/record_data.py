"""The handler data an item names, read inside the sandbox: what the fidelity check compares with.

Handler code never runs in the service process, so the records items name are read by a small
trusted template run like any other (in a fresh sandbox child, against the same handler view, a
built-in's frames or a user handler's snapshot) that returns their columns as plain JSON. The ids
come from template output, so they enter the trusted source only as `repr` of a str or an int.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import RunResult

__all__ = ["MAX_VALUES", "RecordData", "RecordFrame", "fetch_record_data", "record_data_source"]

# values one fetch returns at most (about 20 bytes each as JSON, under the sandbox's 4 MiB output)
MAX_VALUES = 150_000

_TEMPLATE = '''
WANTED = {ids}
LIMIT = {limit}


def question(num_samples):
    known = {{str(r): r for r in handler.records()["record_id"].tolist()}}
    records = {{}}
    missing = []
    skipped = []
    used = 0
    for rid in WANTED:
        if str(rid) not in known:
            missing.append(rid)
            continue
        frame = handler.series(known[str(rid)])
        numeric = [c for c in frame.columns if str(frame[c].dtype)[:3] in ("flo", "int", "uin", "boo")]
        if used + len(frame) * max(1, len(numeric)) > LIMIT:
            skipped.append(rid)
            continue
        used += len(frame) * max(1, len(numeric))
        index = frame.index
        if str(index.dtype).startswith("datetime"):
            stamps = np.datetime_as_string(index.tz_localize(None).to_numpy() if index.tz else index.to_numpy(),
                                           unit="s").tolist()
        else:
            stamps = [str(t) for t in index.tolist()]
        # one text per column (repr of each float, "nan" where missing): the sandbox's JSON checks walk
        # every list element in Python, a string is checked at once
        records[str(rid)] = {{"index": "\\n".join(stamps),
                             "columns": {{str(c): " ".join(map(repr, frame[c].to_numpy(dtype=float).tolist()))
                                         for c in numeric}}}}
    data = {{"units": handler.units, "generated_series": handler.generated_series, "records": records,
            "missing": [str(r) for r in missing], "skipped": [str(r) for r in skipped]}}
    return [{{"question": "record data", "options": ["a", "b"], "answer_index": 0, "metadata": {{"data": data}}}}]
'''


class RecordFrame(BaseModel):
    """One record's series() as sent: the index as lines of text (ISO datetimes or numbers) and each
    numeric column as the space-separated repr of its floats ("nan" where missing)."""

    index: str
    columns: dict[str, str]

    @classmethod
    def of(cls, index: Sequence[str], columns: Mapping[str, Sequence[float]]) -> RecordFrame:
        """The frame as the fetch template sends it (tests and other sources of record data)."""
        return cls(index="\n".join(index), columns={c: " ".join(repr(float(v)) for v in vs) for c, vs in columns.items()})

    def stamps(self) -> list[str]:
        return self.index.split("\n") if self.index else []

    def values(self, column: str) -> np.ndarray:
        text = self.columns[column]
        try:
            return np.array(text.split(" ") if text else [], dtype=float)
        except ValueError:
            raise ValueError(f"column {column!r} of the record data is not a list of numbers") from None


class RecordData(BaseModel):
    """What the handler declares and serves for the records items named."""

    units: dict[str, str] = Field(default_factory=dict)
    generated_series: str = ""
    records: dict[str, RecordFrame] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)  # named by an item, not served by the handler
    skipped: list[str] = Field(default_factory=list)  # over the fetch's size limit: not checked
    error: str | None = None  # the fetch itself failed


def _literal_ids(record_ids: Iterable[Any]) -> list[str | int]:
    ids: list[str | int] = []
    for rid in record_ids:
        if (type(rid) is str or type(rid) is int) and rid not in ids:
            ids.append(rid)
    return ids


def record_data_source(record_ids: Iterable[Any], limit: int = MAX_VALUES) -> str:
    """The trusted template that reads `record_ids` (str or int ids; others are dropped)."""
    return _TEMPLATE.format(ids=repr(_literal_ids(record_ids)), limit=int(limit))


def fetch_record_data(run: Callable[[str], RunResult], record_ids: Iterable[Any]) -> RecordData:
    """Read the records through `run` (one sandboxed run of a template source). Also with no ids:
    the handler's declarations (`units`, `generated_series`) come back either way."""
    result = run(record_data_source(record_ids))
    if result.status is not RunStatus.ok or not result.items:
        return RecordData(error=f"reading the handler's records in the sandbox failed ({result.status.value}): "
                                f"{result.error}")
    try:
        data = RecordData.model_validate(result.items[0]["metadata"]["data"])
        for record in data.records.values():
            for column in record.columns:
                record.values(column)
        return data
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        return RecordData(error=f"reading the handler's records in the sandbox gave no record data: {exc}")
