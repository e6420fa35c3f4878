"""Handler data inside the sandbox: the read-only `handler` a template sees, and snapshots.

A built-in handler is trusted code: the worker imports it and warms its cache before forking.
A user's handler file is untrusted: a hardened child loads it and writes a *snapshot* (records
and every record's series) in a pickle-free format: a JSON manifest plus raw little-endian
bool/int64/float64 buffers, decoded with `np.frombuffer` after bounds checks.

The snapshot comes from a child that may run hostile code, so its bytes bound what it decodes to
only as far as the format makes them: the arrays must lie in the buffer one after another, in
the manifest's order, each byte used once (what `encode_snapshot` writes). Arrays that shared a
region would decode to a copy each (a thousand records naming one 2 MiB region: 2 GB). What the
manifest and its strings decode to is bounded by the memory limit the worker decodes under
(`sandbox.zygote`: the loader child's own). The manifest is parsed by `json` (which raises
`MemoryError` at that limit) and validated without copying its string lists.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, SkipValidation

JsonKey = str | int | float | bool | None


class HandlerView:
    """The `handler` of a template: name, description, and fresh copies of the data.

    `records()` (aliases `getDataframe()`, `get_dataframe()`) is one row per record with a
    `record_id` column; `series(record_id)` (alias `query(record_id)`) is that record's
    samples. Every call returns a new deep copy, so changing one never changes the next.
    `units` (column -> unit) and `generated_series` are what the handler declares (see
    `DatasetHandler`); `units` is a fresh dict on every read.
    """

    __slots__ = ("_HandlerView__source", "_HandlerView__units", "name", "description", "generated_series")

    def __init__(self, source: Any) -> None:
        object.__setattr__(self, "_HandlerView__source", source)
        object.__setattr__(self, "_HandlerView__units", tuple(declared_units(source).items()))
        object.__setattr__(self, "name", str(getattr(source, "name", "") or ""))
        object.__setattr__(self, "description", str(getattr(source, "description", "") or ""))
        object.__setattr__(self, "generated_series", str(getattr(source, "generated_series", "") or ""))

    @property
    def units(self) -> dict[str, str]:
        """The unit of each series() column the handler declares (a fresh copy)."""
        return dict(self.__units)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("handler is read-only in templates")

    def __delattr__(self, name: str) -> None:
        raise TypeError("handler is read-only in templates")

    def records(self) -> pd.DataFrame:
        """One row per record: `record_id` plus metadata and label columns (a fresh copy)."""
        return self.__source.records().copy(deep=True)

    def series(self, record_id: Any) -> pd.DataFrame:
        """The samples of one record: time index, one column per channel (a fresh copy)."""
        return self.__source.series(record_id).copy(deep=True)

    def getDataframe(self) -> pd.DataFrame:  # noqa: N802 - TimeSeriesExamAgent's name
        """Alias of `records()`."""
        return self.records()

    def get_dataframe(self) -> pd.DataFrame:
        """Alias of `records()`."""
        return self.records()

    def query(self, record_id: Any) -> pd.DataFrame:
        """Alias of `series(record_id)`."""
        return self.series(record_id)

    def __repr__(self) -> str:
        return f"<handler {self.name!r}>"


def declared_units(source: Any) -> dict[str, str]:
    """A handler's `units` declaration as plain strings (anything but a dict declares none)."""
    units = getattr(source, "units", None)
    if type(units) is not dict:
        return {}
    return {str(column): str(unit) for column, unit in units.items()}


def _lookup_key(record_id: Any) -> Any:
    if isinstance(record_id, np.generic):
        return record_id.item()
    return record_id


class SnapshotHandler:
    """A handler rebuilt from a snapshot: immutable frames, handed out as copies."""

    def __init__(self, name: str, description: str, records: pd.DataFrame,
                 series: dict[Any, pd.DataFrame], units: dict[str, str] | None = None,
                 generated_series: str = "") -> None:
        self.name = name
        self.description = description
        self.units = dict(units or {})
        self.generated_series = generated_series
        self._records = records
        self._series = series

    def records(self) -> pd.DataFrame:
        return self._records.copy(deep=True)

    def series(self, record_id: Any) -> pd.DataFrame:
        key = _lookup_key(record_id)
        try:
            frame = self._series.get(key)
        except TypeError:
            frame = None
        if frame is None and not isinstance(key, str):
            frame = self._series.get(str(key))
        if frame is None:
            examples = ", ".join(repr(k) for k in list(self._series)[:3])
            raise KeyError(f"unknown record_id {record_id!r} (record_ids look like {examples})")
        return frame.copy(deep=True)


# --- snapshot format -----------------------------------------------------------------------

_MAGIC = b"ISNAP1\n"
_DTYPES = {"bool": np.dtype("|b1"), "int": np.dtype("<i8"), "float": np.dtype("<f8")}
Kind = Literal["bool", "int", "float", "datetime", "timedelta", "str"]


class SnapshotError(ValueError):
    """A snapshot is malformed or over its limits."""


class ArraySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    kind: Kind
    offset: int = Field(ge=0)
    count: int = Field(ge=0)
    tz: str | None = None
    # checked where it is decoded (`_strings`): validating would copy a list as long as the column
    strings: SkipValidation[list[str | None] | None] = None


class ColumnSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: JsonKey
    values: ArraySpec


class FrameSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    columns: list[ColumnSpec]
    index: ArraySpec
    index_name: JsonKey = None


class SeriesEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    record_id: JsonKey
    frame: FrameSpec


class SnapshotManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    description: str
    records: FrameSpec
    series: list[SeriesEntry]
    units: dict[str, str] = Field(default_factory=dict)
    generated_series: str = ""


def _json_key(value: Any) -> JsonKey:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return str(value)


class _Writer:
    def __init__(self, max_bytes: int) -> None:
        self.chunks: list[bytes] = []
        self.size = 0  # everything counted against the limit
        self.blob_size = 0  # bytes of raw buffers: the next offset
        self.max_bytes = max_bytes

    def add(self, values: Any) -> ArraySpec:
        values = pd.Index(values) if not isinstance(values, pd.Index) else values
        n = len(values)
        dtype = values.dtype
        tz = None
        if isinstance(dtype, pd.DatetimeTZDtype):
            tz = str(dtype.tz)
            values = values.tz_convert("UTC").tz_localize(None)
            dtype = values.dtype
        if dtype.kind == "M":
            raw = np.asarray(values.astype("datetime64[ns]")).view("<i8")
            return self._raw("datetime", raw, tz)
        if dtype.kind == "m":
            return self._raw("timedelta", np.asarray(values.astype("timedelta64[ns]")).view("<i8"), None)
        has_na = bool(values.hasnans)
        if pd.api.types.is_bool_dtype(dtype) and not has_na:
            return self._raw("bool", values.to_numpy(dtype="|b1"), None)
        if pd.api.types.is_integer_dtype(dtype) and not has_na:
            return self._raw("int", values.to_numpy(dtype="<i8"), None)
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype) \
                and not pd.api.types.is_complex_dtype(dtype):
            return self._raw("float", values.to_numpy(dtype="<f8", na_value=np.nan), None)
        strings = [None if _is_missing(v) else str(v) for v in values]
        self.size += sum(len(s) for s in strings if s is not None) + 8 * n
        self._check()
        return ArraySpec(kind="str", offset=0, count=n, strings=strings)

    def _raw(self, kind: Kind, array: np.ndarray, tz: str | None) -> ArraySpec:
        data = np.ascontiguousarray(array).tobytes()
        spec = ArraySpec(kind=kind, offset=self.blob_size, count=len(array), tz=tz)
        self.chunks.append(data)
        self.blob_size += len(data)
        self.size += len(data)
        self._check()
        return spec

    def _check(self) -> None:
        if self.size > self.max_bytes:
            raise SnapshotError(f"the handler's data is larger than the {self.max_bytes}-byte snapshot limit")


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value)) if not isinstance(value, (list, tuple, dict, np.ndarray)) else False
    except (TypeError, ValueError):
        return False


def _frame_spec(frame: pd.DataFrame, writer: _Writer) -> FrameSpec:
    if not isinstance(frame, pd.DataFrame):
        raise SnapshotError(f"expected a DataFrame, got {type(frame).__name__}")
    index = frame.index
    if isinstance(index, pd.MultiIndex):
        index = pd.Index([str(t) for t in index])
    columns = [ColumnSpec(name=_json_key(name), values=writer.add(frame.iloc[:, i]))
               for i, name in enumerate(frame.columns)]
    return FrameSpec(columns=columns, index=writer.add(index), index_name=_json_key(index.name))


def encode_snapshot(handler: Any, *, max_bytes: int, max_records: int) -> bytes:
    """Snapshot a handler: records() and series(record_id) of every record."""
    writer = _Writer(max_bytes)
    records = handler.records()
    if not isinstance(records, pd.DataFrame) or "record_id" not in records.columns:
        raise SnapshotError("records() must return a DataFrame with a 'record_id' column")
    if len(records) > max_records:
        raise SnapshotError(f"the handler has {len(records)} records; the sandbox snapshot limit is {max_records}")
    records_spec = _frame_spec(records, writer)
    entries = []
    for record_id in records["record_id"].tolist():
        entries.append(SeriesEntry(record_id=_json_key(record_id), frame=_frame_spec(handler.series(record_id), writer)))
    manifest = SnapshotManifest(name=str(getattr(handler, "name", "") or type(handler).__name__),
                                description=str(getattr(handler, "description", "") or ""),
                                records=records_spec, series=entries, units=declared_units(handler),
                                generated_series=str(getattr(handler, "generated_series", "") or ""))
    header = manifest.model_dump_json().encode("utf-8")
    if len(header) + writer.blob_size > max_bytes:
        raise SnapshotError(f"the handler's data is larger than the {max_bytes}-byte snapshot limit")
    return _MAGIC + struct.pack("<Q", len(header)) + header + b"".join(writer.chunks)


def _dtype(spec: ArraySpec) -> np.dtype:
    """How a bool, int, float, datetime or timedelta array is stored (datetimes as int64 ns)."""
    return _DTYPES["int" if spec.kind in ("datetime", "timedelta") else spec.kind]


def _strings(spec: ArraySpec) -> list[str | None]:
    strings = spec.strings
    if type(strings) is not list or len(strings) != spec.count:
        raise SnapshotError("string column does not match its count")
    if not all(value is None or type(value) is str for value in strings):
        raise SnapshotError("a string column holds something other than strings and nulls")
    return strings


def _check_layout(manifest: SnapshotManifest, blob_size: int) -> None:
    """The arrays lie in the buffer one after another in the manifest's order, every byte used
    once: no array shares, overlaps or skips bytes, and nothing follows the last one."""
    frames = [manifest.records, *(entry.frame for entry in manifest.series)]
    position = 0
    for frame in frames:
        for spec in [*(column.values for column in frame.columns), frame.index]:
            if spec.kind == "str":
                continue
            if spec.offset != position:
                raise SnapshotError(f"an array starts at byte {spec.offset} of the snapshot's data, not at {position} "
                                    "where the previous one ended (arrays may not share or skip bytes)")
            position += spec.count * _dtype(spec).itemsize
            if position > blob_size:
                raise SnapshotError("array runs past the end of the snapshot")
    if position != blob_size:
        raise SnapshotError(f"the snapshot's data has {blob_size - position} bytes no array uses")


def _decode_array(spec: ArraySpec, blob: memoryview) -> pd.Index:
    if spec.kind == "str":
        return pd.Index(np.array(_strings(spec), dtype=object), dtype=object)
    # within the buffer: `_check_layout`
    array = np.frombuffer(blob, dtype=_dtype(spec), count=spec.count, offset=spec.offset).copy()
    if spec.kind == "datetime":
        index = pd.DatetimeIndex(array.view("datetime64[ns]"))
        return index.tz_localize("UTC").tz_convert(spec.tz) if spec.tz else index
    if spec.kind == "timedelta":
        return pd.TimedeltaIndex(array.view("timedelta64[ns]"))
    return pd.Index(array)


def _decode_frame(spec: FrameSpec, blob: memoryview) -> pd.DataFrame:
    index = _decode_array(spec.index, blob)
    data = {}
    names = []
    for i, column in enumerate(spec.columns):
        values = _decode_array(column.values, blob)
        if len(values) != len(index):
            raise SnapshotError("a column's length does not match its index")
        data[i] = values.to_numpy() if not isinstance(values, pd.DatetimeIndex) or values.tz is None else values
        names.append(column.name)
    frame = pd.DataFrame(data, index=index)
    frame.columns = pd.Index(names) if names else frame.columns
    frame.index.name = spec.index_name
    return frame


_SHARED_STRINGS = 65_536  # how many distinct short strings are kept as one object each


def _parse_manifest(header: bytes) -> Any:
    """The manifest's JSON, by `json` (it raises MemoryError at a memory limit; pydantic's parser
    would abort the process), each short string of a string column one object however often it
    repeats (a label or a category on every row), as pydantic's parser would keep it."""
    shared: dict[str, str] = {}

    def share(obj: dict[str, Any]) -> dict[str, Any]:
        strings = obj.get("strings")
        if type(strings) is list:
            obj["strings"] = [
                (shared.setdefault(value, value) if len(shared) < _SHARED_STRINGS else shared.get(value, value))
                if type(value) is str and len(value) <= 64 else value
                for value in strings]
        return obj

    return json.loads(header, object_hook=share)


def decode_snapshot(data: bytes) -> SnapshotHandler:
    """Rebuild a SnapshotHandler from untrusted snapshot bytes (no pickle, bounds-checked, every
    byte decoded once). Raises `SnapshotError`; `MemoryError` at the caller's memory limit."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise SnapshotError("not a handler snapshot")
    (header_len,) = struct.unpack_from("<Q", data, len(_MAGIC))
    start = len(_MAGIC) + 8
    if header_len > len(data) - start:
        raise SnapshotError("snapshot header runs past the end")
    try:
        manifest = SnapshotManifest.model_validate(_parse_manifest(data[start:start + header_len]))
    except (ValueError, RecursionError) as exc:
        raise SnapshotError(f"malformed snapshot manifest: {str(exc)[:200]}") from None
    blob = memoryview(data)[start + header_len:]
    _check_layout(manifest, len(blob))
    records = _decode_frame(manifest.records, blob)
    series = {entry.record_id: _decode_frame(entry.frame, blob) for entry in manifest.series}
    return SnapshotHandler(manifest.name, manifest.description, records, series, manifest.units,
                           manifest.generated_series)


def snapshot_round_trip(handler: Any, **limits: int) -> SnapshotHandler:
    """encode then decode (tests and diagnostics)."""
    return decode_snapshot(encode_snapshot(handler, **limits))


def manifest_summary(data: bytes) -> dict[str, Any]:
    """Name and record count of a snapshot, for logs."""
    (header_len,) = struct.unpack_from("<Q", data, len(_MAGIC))
    start = len(_MAGIC) + 8
    manifest = json.loads(data[start:start + header_len])
    return {"name": manifest.get("name"), "records": len(manifest.get("series", []))}
