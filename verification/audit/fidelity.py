"""Data fidelity: every channel an item shows is the data its metadata names, under its own name
and unit.

A channel is traced when its values equal a stretch of one column of the records
`metadata["record_ids"]` names (one record, or the named records one after another), as they are
or rounded to the decimals shown; a channel made otherwise (a rolling mean, a conversion, a
percentage change) says how in `series(..., derived="7-day mean of temp_max")`, and a handler
whose templates make their own series (synthetic data) declares `generated_series`. A traced
channel whose name names another column, or whose unit is another unit than the column's (the
handler declares `units`), contradicts its data; so does a question, option or context naming a
unit of the same quantity other than the one shown ("inches" over a series in mm).

Pure: it compares items with `RecordData` read in the sandbox (`record_data`). A failure quotes
one item: which channel, the values shown against the column's values where they differ, and
exactly what to write instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from itemsmith.items.schema import Item, Series
from itemsmith.verification.audit.models import Finding
from itemsmith.verification.audit.quantities import normal_text
from itemsmith.verification.audit.record_data import RecordData
from itemsmith.verification.audit.units import Unit, canonical_unit, units_named

__all__ = ["check_fidelity", "named_record_ids"]

_RTOL, _ATOL = 1e-9, 1e-12
_MAX_DECIMALS = 6
_DERIVED_HINT = ('series(values, name="...", unit="...", derived="<how it was made from which column, e.g. '
                 '7-day mean of temp_max>")')


def named_record_ids(item: Item) -> list[str]:
    """The record ids an item's metadata names (`record_ids`, a list or one id), as text."""
    named = item.metadata.get("record_ids")
    if named is None:
        return []
    values = named if isinstance(named, list) else [named]
    return [str(v) for v in values if isinstance(v, str | int) and not isinstance(v, bool)]


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number(value: float) -> str:
    return f"{value:.6g}"


@dataclass(frozen=True)
class _Frame:
    """One record, or several named records one after another."""

    label: str
    index: list[str]
    columns: dict[str, np.ndarray]


class _Records:
    """The fetched records as arrays (built once per check), and the frames an item's ids name."""

    def __init__(self, data: RecordData) -> None:
        self.single = {rid: _Frame(f"record {rid!r}", record.stamps(),
                                   {c: record.values(c) for c in record.columns})
                       for rid, record in data.records.items()}
        self._joined: dict[tuple[str, ...], _Frame] = {}
        self._rounded: dict[tuple[int, int], np.ndarray] = {}

    def frames(self, ids: list[str]) -> list[_Frame]:
        parts = [self.single[rid] for rid in dict.fromkeys(ids) if rid in self.single]
        if len(parts) < 2:
            return parts
        key = tuple(dict.fromkeys(r for r in ids if r in self.single))
        if key not in self._joined:
            common = sorted(set.intersection(*(set(f.columns) for f in parts)))
            self._joined[key] = _Frame("records " + " + ".join(repr(rid) for rid in key),
                                       [t for f in parts for t in f.index],
                                       {c: np.concatenate([f.columns[c] for f in parts]) for c in common})
        return [self._joined[key], *parts]  # a stretch of one record is also one of the records joined

    def rounded(self, values: np.ndarray, decimals: int) -> np.ndarray:
        key = (id(values), decimals)
        if key not in self._rounded:
            self._rounded[key] = np.round(values, decimals)
        return self._rounded[key]


def _decimals(values: np.ndarray) -> int | None:
    """The fewest decimals that write every value exactly (None: more than `_MAX_DECIMALS`)."""
    for d in range(_MAX_DECIMALS + 1):
        scaled = values * 10.0 ** d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d
    return None


def _close(values: np.ndarray | float, shown: np.ndarray | float) -> np.ndarray:
    """Elementwise equality up to float noise (np.isclose without its overhead; NaN is never close)."""
    return np.abs(values - shown) <= _ATOL + _RTOL * np.abs(shown)


def _is_stretch(values: np.ndarray, shown: np.ndarray) -> bool:
    n = len(shown)
    if n > len(values):
        return False
    for start in np.flatnonzero(_close(values[: len(values) - n + 1], float(shown[0]))):
        if _close(values[start:start + n], shown).all():
            return True
    return False


def _traced_columns(shown: np.ndarray, frames: list[_Frame], records: _Records) -> set[str]:
    """The columns `shown` is a stretch of, as they are or rounded to the decimals shown, in the
    first of `frames` (the named records joined, then each alone) where it is one."""
    decimals = _decimals(shown)
    for frame in frames:
        traced = {c for c, values in frame.columns.items() if _is_stretch(values, shown)}
        if not traced and decimals is not None:
            traced = {c for c, values in frame.columns.items()
                      if _is_stretch(records.rounded(values, decimals), shown)}
        if traced:
            return traced
    return set()


def _stamps(texts: Sequence[str]) -> pd.DatetimeIndex | None:
    parsed = pd.to_datetime(pd.Series(list(texts)), errors="coerce", format="mixed")
    return None if parsed.isna().any() else pd.DatetimeIndex(parsed)


def _closest(s: Series, frames: list[_Frame]) -> str:
    """Where the channel comes closest to the named data: the column and the positions that differ."""
    shown = np.asarray(s.values, dtype=float)
    best: tuple[int, str, str, list[tuple[str, float, float]]] | None = None  # (equal, frame, column, diffs)
    shown_stamps = _stamps(s.timestamps) if s.timestamps else None
    for frame in frames:
        index_stamps = _stamps(frame.index) if shown_stamps is not None else None
        for column, values in frame.columns.items():
            if index_stamps is not None and shown_stamps is not None:  # align by timestamp
                where = pd.Index(index_stamps).get_indexer(shown_stamps)
                if (where < 0).any():
                    continue
                pairs = [(s.timestamps[i], shown[i], values[w]) for i, w in enumerate(where)]  # type: ignore[index]
            else:  # align by the offset most values agree on
                offsets = {int(p) - j for j in {0, len(shown) // 2, len(shown) - 1}
                           for p in np.flatnonzero(_close(values, float(shown[j])))}
                offsets = {o for o in offsets if 0 <= o <= len(values) - len(shown)}
                if not offsets:
                    continue
                start = max(offsets, key=lambda o: int(_close(values[o:o + len(shown)], shown).sum()))
                pairs = [(f"position {start + i}", shown[i], values[start + i]) for i in range(len(shown))]
            diffs = [(where_, a, b) for where_, a, b in pairs if not _close(np.float64(b), a)]
            equal = len(pairs) - len(diffs)
            if best is None or equal > best[0]:
                best = (equal, frame.label, column, diffs)
    if best is None:
        return "no stretch of any column of the named records lines up with it"
    equal, label, column, diffs = best
    shown_diffs = ", ".join(f"{w}: shown {_number(a)}, {column} is {_number(b)}" for w, a, b in diffs[:3])
    more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
    return f"closest is column {column!r} of {label}: {equal} of {len(shown)} values equal; {shown_diffs}{more}"


def _names_other_column(s: Series, traced: set[str], columns: Iterable[str]) -> str | None:
    name = f" {normal_text(s.name)} "
    named = {c for c in columns if f" {normal_text(c)} " in name}
    if not named or named & traced:
        return None
    return sorted(named)[0]


def _unit_clash(s: Series, column_unit: str | None) -> str | None:
    if not s.unit or not column_unit:
        return None
    shown, declared = canonical_unit(s.unit), canonical_unit(column_unit)
    if shown is not None and declared is not None:
        return None if shown == declared else f"{s.unit!r} ({shown.name}) where the column is in {declared.name}"
    if (shown is None) != (declared is None):
        return f"{s.unit!r} where the column is in {column_unit!r}"
    return None


@dataclass(frozen=True)
class _Problem:
    kind: str
    message: str


def _item_problems(item: Item, data: RecordData, records: _Records) -> list[_Problem]:
    problems: list[_Problem] = []
    ids = named_record_ids(item)
    frames = records.frames(ids)
    columns = {c for f in frames for c in f.columns}
    shown_units: dict[str, set[Unit]] = {}  # quantity -> units of the channels shown
    for s in item.series:
        declared = s.derived is not None
        if declared and not (s.derived or "").strip():
            problems.append(_Problem("blank_derived", f"channel {s.name!r} declares derived= but not how it was made; "
                                                      f"write {_DERIVED_HINT}"))
            continue
        column_unit = None
        if not declared and not data.generated_series:
            if not ids:
                problems.append(_Problem("untraced", f"channel {s.name!r} names no records: give the item "
                                                     "metadata={'record_ids': [rid, ...]} for the records it shows, "
                                                     f"or, if it is not a stretch of a column, {_DERIVED_HINT}"))
                continue
            if any(rid in data.missing for rid in ids):
                problems.append(_Problem("untraced", f"metadata names record(s) the handler does not have: "
                                                     f"{sorted(set(ids) & set(data.missing))}"))
                continue
            if not frames:  # named records over the fetch limit: not checked
                continue
            traced = _traced_columns(np.asarray(s.values, dtype=float), frames, records)
            if not traced:
                problems.append(_Problem("untraced", f"channel {s.name!r} is not a stretch of any column of "
                                                     f"{', '.join(repr(r) for r in ids)} ({_closest(s, frames)}); "
                                                     f"show the column's values as they are, or, if the channel is "
                                                     f"made from them, say how: {_DERIVED_HINT}"))
                continue
            other = _names_other_column(s, traced, columns)
            if other is not None:
                problems.append(_Problem("wrong_name", f"channel {s.name!r} names column {other!r} but shows "
                                                       f"column {sorted(traced)[0]!r}; name it after the column it "
                                                       "shows (or show the column it names)"))
            units = {data.units[c] for c in traced if c in data.units}
            column_unit = units.pop() if len(units) == 1 else None
            clash = _unit_clash(s, column_unit)
            if clash is not None:
                problems.append(_Problem("wrong_unit", f"channel {s.name!r} (column {sorted(traced)[0]!r}) is "
                                                       f"labelled {clash}; write unit={column_unit!r}, or convert and "
                                                       f"say so: {_DERIVED_HINT}"))
        unit = canonical_unit(s.unit) or canonical_unit(column_unit)
        if unit is not None:
            shown_units.setdefault(unit.quantity, set()).add(unit)
        for named in units_named(f"{s.name} {s.derived or ''}"):
            if unit is not None and named.quantity == unit.quantity and named != unit:
                problems.append(_Problem("wrong_unit", f"channel {s.name!r} is in {unit.name} but its label names "
                                                       f"{named.name}"))
    texts = {"question": item.question, "context": item.context or "", **{f"option {o!r}": o for o in item.options}}
    for where, text in texts.items():
        for named in units_named(text):
            shown = shown_units.get(named.quantity)
            if shown and named not in shown:
                problems.append(_Problem("wrong_unit", f"the {where} names the unit {named.name!r} but the "
                                                       f"{named.quantity} shown is in "
                                                       f"{', '.join(sorted(repr(u.name) for u in shown))}; state the "
                                                       "unit of the data shown (or convert the series and declare it: "
                                                       f"{_DERIVED_HINT})"))
                break
    return problems


def check_fidelity(items: Sequence[Item], data: RecordData) -> Finding:
    """Whether every item shows the data its metadata names, under its own name and unit."""
    if data.error is not None:
        return Finding(check="data_fidelity", passed=False, message=data.error)
    failed: dict[str, list[tuple[Item, _Problem]]] = {}
    records = _Records(data)
    for item in items:
        for problem in _item_problems(item, data, records):
            failed.setdefault(problem.kind, []).append((item, problem))
    unchecked = f"; {len(data.skipped)} records over the size limit not compared" if data.skipped else ""
    if not failed:
        return Finding(check="data_fidelity", passed=True,
                       message=f"every channel of {len(items)} items is a stretch of a named record's column, "
                               f"declared derived or generated{unchecked}")
    kinds = sorted(failed, key=lambda k: -len({id(i) for i, _ in failed[k]}))
    bad_items = len({id(i) for hits in failed.values() for i, _ in hits})
    item, problem = failed[kinds[0]][0]
    also = [f"{len({id(i) for i, _ in failed[k]})} items {k.replace('_', ' ')}" for k in kinds[1:]]
    return Finding(check="data_fidelity", passed=False,
                   message=f"{bad_items} of {len(items)} items show data that is not what they say "
                           f"({len({id(i) for i, _ in failed[kinds[0]]})} {kinds[0].replace('_', ' ')}"
                           + (f"; {'; '.join(also)}" if also else "") + f"), e.g. {_short(item.question)!r} "
                           f"(records {named_record_ids(item) or 'none named'}): {problem.message}{unchecked}")

