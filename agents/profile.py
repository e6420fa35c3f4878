"""What the generator needs to know about a handler's data: columns, dtypes, an example record,
a peek at a few series.

The profile is read *inside the sandbox* by a small template, so a user's handler file is never
executed in the service process and the profile shows exactly what templates will see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from itemsmith.agents.errors import AgentError
from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import SandboxPool

_PROFILE_TEMPLATE = '''
def cell(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def column_info(frame, name):
    col = frame[name]
    info = {"name": str(name), "dtype": str(col.dtype), "missing": int(col.isna().sum())}
    values = col.dropna()
    if len(values) == 0:
        return info
    kind = str(col.dtype)
    if kind.startswith("int") or kind.startswith("float") or kind.startswith("uint"):
        info["min"] = round(float(values.min()), 4)
        info["max"] = round(float(values.max()), 4)
    elif kind == "bool":
        info["values"] = sorted(set(str(v) for v in values.tolist()))
    else:
        uniq = values.astype(str).unique().tolist()
        info["n_unique"] = len(uniq)
        info["values"] = [cell(v) for v in uniq[:8]]
    return info


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    profile = {"name": str(handler.name), "description": str(handler.description), "n_records": len(rec),
               "record_id_dtype": str(rec["record_id"].dtype),
               "columns": [column_info(rec, c) for c in rec.columns],
               "example_records": [{str(k): cell(v) for k, v in row.items()} for row in
                                   rec.head(2).to_dict(orient="records")],
               "series": [], "units": handler.units}
    picks = [0, len(ids) // 2] if len(ids) > 1 else [0]
    for position in picks:
        rid = ids[position]
        frame = handler.series(rid)
        index = frame.index
        peek = {"record_id": cell(rid), "length": len(frame), "index_dtype": str(index.dtype),
                "index_name": str(index.name), "index_first": cell(index[0]) if len(index) else "",
                "index_last": cell(index[-1]) if len(index) else "",
                "step": cell(index[1] - index[0]) if len(index) > 1 else "",
                "columns": [column_info(frame, c) for c in frame.columns],
                "head": [[cell(index[i])] + [cell(v) for v in frame.iloc[i].tolist()]
                         for i in range(min(3, len(frame)))]}
        profile["series"].append(peek)
    lengths = []
    counts = {}
    sampled = 0
    for position in range(0, len(ids), max(1, len(ids) // 20)):
        frame = handler.series(ids[position])
        lengths.append(len(frame))
        sampled += 1
        for name in frame.columns:
            counts[str(name)] = counts.get(str(name), 0) + 1
    profile["series_length_range"] = [min(lengths), max(lengths)]
    profile["channel_counts"] = counts
    profile["n_sampled"] = sampled
    return [{"question": "profile", "options": ["a", "b"], "answer_index": 0, "metadata": {"profile": profile}}]
'''


class ColumnInfo(BaseModel):
    name: str
    dtype: str
    missing: int = 0
    min: float | None = None
    max: float | None = None
    n_unique: int | None = None
    values: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        parts = [f"{self.name} ({self.dtype})"]
        if self.min is not None:
            parts.append(f"range {self.min:g}..{self.max:g}")
        if self.values:
            more = f", ... ({self.n_unique} distinct)" if self.n_unique and self.n_unique > len(self.values) else ""
            parts.append("values " + ", ".join(repr(v) for v in self.values) + more)
        if self.missing:
            parts.append(f"{self.missing} missing")
        return ": ".join([parts[0], "; ".join(parts[1:])]) if len(parts) > 1 else parts[0]


class SeriesPeek(BaseModel):
    record_id: str
    length: int
    index_dtype: str
    index_name: str
    index_first: str
    index_last: str
    step: str
    columns: list[ColumnInfo]
    head: list[list[str]]

    @property
    def sampling(self) -> str:
        """The step between the first two samples in words ("every 1 h"); a non-time index as its step."""
        if not self.step:
            return "one sample"
        if not self.index_dtype.startswith(("datetime", "timedelta")):
            return f"index step {self.step}"
        try:
            seconds = pd.Timedelta(self.step).total_seconds()
        except ValueError:
            return f"step {self.step}"
        for unit, size in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            if seconds >= size and seconds % size == 0:
                return f"every {seconds / size:g} {unit}"
        return f"every {seconds:g} s"


MAX_CONTEXT = 240


class HandlerProfile(BaseModel):
    """The data a handler serves, as a template sees it."""

    name: str
    description: str
    n_records: int
    record_id_dtype: str
    columns: list[ColumnInfo]
    example_records: list[dict[str, Any]]
    series: list[SeriesPeek]
    series_length_range: tuple[int, int]
    channel_counts: dict[str, int] = Field(default_factory=dict)
    n_sampled: int = 0
    units: dict[str, str] = Field(default_factory=dict)  # series() column -> unit, as the handler declares

    @property
    def varying_channels(self) -> bool:
        """Whether records differ in their channels (e.g. one family has `value`, another `x`, `y`)."""
        return any(n < self.n_sampled for n in self.channel_counts.values())

    @property
    def record_columns(self) -> list[str]:
        return [c.name for c in self.columns]

    def value_range(self, channels: Iterable[str]) -> tuple[float, float] | None:
        """The least and largest value of these channels over the sampled records (None: no numbers)."""
        wanted = set(channels)
        ranges = [(c.min, c.max) for peek in self.series for c in peek.columns
                  if c.name in wanted and c.min is not None and c.max is not None]
        return (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None

    def middle_value(self, channels: Iterable[str]) -> float:
        """A round value inside the channels' range (its midpoint to two significant digits; 0
        without numbers): a threshold some values pass and others do not."""
        span = self.value_range(channels)
        return 0.0 if span is None else float(f"{(span[0] + span[1]) / 2:.2g}")

    @property
    def context(self) -> str:
        """What the data is in the handler's own words (the description's first sentence, at most
        `MAX_CONTEXT` characters): the default context a question gives its reader."""
        first = re.split(r"(?<=[.!?])\s+", " ".join(self.description.split()), maxsplit=1)[0]
        if not first:
            return f"the {self.name} dataset"
        return first if len(first) <= MAX_CONTEXT else first[:MAX_CONTEXT - 3].rsplit(" ", 1)[0] + "..."

    @property
    def channels(self) -> list[str]:
        seen: list[str] = []
        for peek in self.series:
            seen += [c.name for c in peek.columns if c.name not in seen]
        seen += [c for c in sorted(self.channel_counts, key=lambda c: -self.channel_counts[c]) if c not in seen]
        return seen


class ProfileError(AgentError):
    """The handler could not be profiled (it failed to load or to serve its data)."""


def profile_handler(pool: SandboxPool) -> HandlerProfile:
    """Profile the pool's handler inside the sandbox."""
    result = pool.run(_PROFILE_TEMPLATE, num_samples=1, seed=0)
    if result.status is not RunStatus.ok or not result.items:
        raise ProfileError(f"could not read the handler's data in the sandbox ({result.status.value}): {result.error}")
    return HandlerProfile.model_validate(result.items[0]["metadata"]["profile"])
