"""Data fidelity: every channel an item shows is the data its metadata names, at its timestamps,
under its own name and unit, or is made from that data the way its `derived=` says.

A channel with timestamps is traced when every point equals a column of the records
`metadata["record_ids"]` names (one record, or the named records one after another) at its
timestamp, as it is or rounded to the decimals shown; timestamps are compared as moments whatever
their format ("2013-03-11", "2013-03-11 14:00", "Mar 11, 2013"), and a channel may show a subset of
the rows (every 7th day). A channel without timestamps is traced as a stretch of a column; when the
item then names dates, they must lie within the stretch's dates in the record. A channel made
otherwise says how in `series(..., derived="7-day rolling mean of temp_max")`: the text is read as a
recipe (`recipes`) and recomputed on the named records (`readings`), point by point at its timestamps; a
derivation the vocabulary cannot read is unverified (rejected, or flagged with
`AuditConfig.unverified_derivation="flag"`). A handler whose templates make their own series
(synthetic data) declares `generated_series`: its channels are not traced, and a derived channel is
recomputed from the item's other channels. A traced channel whose name names another column, or
whose unit is another unit than the column's (the handler declares `units`), contradicts its data;
so does a question, option or context naming a unit of the same quantity other than the one shown
("inches" over a series in mm).

Pure: it compares items with `RecordData` read in the sandbox (`record_data`). A failure quotes
one item: which channel, the values shown against the column's values where they differ, and
exactly what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from itemsmith.items.schema import Item, Series
from itemsmith.verification.audit.dates import Span, Timeline, When, looks_like_date, named_outside, read_when
from itemsmith.verification.audit.models import Finding
from itemsmith.verification.audit.quantities import normal_text
from itemsmith.verification.audit.readings import Compared, Reading, Table, Tolerance, compare, readings, stamp_rows
from itemsmith.verification.audit.recipes import VOCABULARY, Column, Recipe, describe, parse_recipe
from itemsmith.verification.audit.record_data import RecordData
from itemsmith.verification.audit.units import Unit, canonical_unit, units_named
from itemsmith.verification.settings import AuditConfig, VerificationSettings

__all__ = ["channel_stamps", "check_fidelity", "named_record_ids"]

_RAW_RTOL, _DERIVED_RTOL = 1e-9, 1e-6
_DERIVED_HINT = ('series(values, name="...", unit="...", derived="<how it was made from which column, e.g. '
                 '7-day rolling mean of temp_max>")')
_RECIPE_HINT = (f"write derived= in the audit's vocabulary: {VOCABULARY}; recipe.rolling(\"temp_max\", \"mean\", 7) "
                "and the other recipe helpers write it for you")


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
class Stamps:
    """A channel's timestamps as read: each one's readings, or why they cannot be compared."""

    readings: list[list[When]] | None  # None: no timestamps the audit compares by
    unreadable: str | None = None  # a timestamp that looks like a date in a format the audit does not read


def channel_stamps(s: Series) -> Stamps:
    """A channel's timestamps read as moments: all of them (compared by time), none (a channel without
    timestamps, or with labels that are no dates: "day 1", "t3"; compared by position), or one that
    looks like a date the audit cannot read (the channel cannot be compared: that is the finding)."""
    if not s.timestamps:
        return Stamps(None)
    out = []
    for text in s.timestamps:
        whens = read_when(text)
        if not whens:
            return Stamps(None, text if looks_like_date(text) else None)
        out.append(whens)
    return Stamps(out)


class _Records:
    """The fetched records as tables (built once per check), and the tables an item's ids name."""

    def __init__(self, data: RecordData) -> None:
        units = {c: canonical_unit(u) for c, u in data.units.items()}
        self.single: dict[str, Table] = {}
        for rid, record in data.records.items():
            stamps = record.stamps()
            self.single[rid] = Table(f"record {rid!r}", {c: record.values(c) for c in record.columns},
                                     Timeline.read(stamps) if stamps else None, units, (rid,))
        self._joined: dict[tuple[str, ...], Table] = {}
        self._candidates: dict[tuple[int, tuple[str, ...]], list[np.ndarray]] = {}
        self._readings: dict[tuple[int, Recipe], list[Reading]] = {}
        self.units = units

    def tables(self, ids: list[str]) -> list[Table]:
        parts = [self.single[rid] for rid in dict.fromkeys(ids) if rid in self.single]
        if len(parts) < 2:
            return parts
        key = tuple(dict.fromkeys(r for r in ids if r in self.single))
        if key not in self._joined:
            common = sorted(set.intersection(*(set(t.columns) for t in parts)))
            timelines = [t.timeline for t in parts]
            timeline = None
            if all(t is not None for t in timelines):
                starts = np.concatenate([t.starts for t in timelines])  # type: ignore[union-attr]
                ends = np.concatenate([t.ends for t in timelines])  # type: ignore[union-attr]
                if (np.diff(starts) > np.timedelta64(0, "s")).all():  # records that follow each other in time
                    timeline = Timeline(starts, ends)
            self._joined[key] = Table("records " + " + ".join(repr(rid) for rid in key),
                                      {c: np.concatenate([t.columns[c] for t in parts]) for c in common},
                                      timeline, self.units, key)
        return [self._joined[key], *parts]  # a stretch of one record is also one of the records joined

    def readings(self, table: Table, recipe: Recipe) -> list[Reading]:
        """Every reading of a recipe on a table (computed once per check: items share records)."""
        key = (id(table), recipe)
        if key not in self._readings:
            self._readings[key] = readings(recipe, table)
        return self._readings[key]

    def candidates(self, table: Table, s: Series, stamps: list[list[When]]) -> list[np.ndarray]:
        """The rows of each timestamp of a channel on a table (looked up once per table and channel)."""
        assert table.timeline is not None
        key = (id(table), tuple(s.timestamps or ()))
        if key not in self._candidates:
            self._candidates[key] = stamp_rows(table.timeline, stamps)
        return self._candidates[key]


@dataclass
class _Best:
    """The reading that came closest to a channel, for the message."""

    compared: Compared
    table: str
    what: str
    by_time: bool
    reading: str = ""  # which reading of a recipe (a trailing 7-row mean, weeks from Monday)

    def quote(self, s: Series) -> str:
        shown = s.values
        diffs = self.compared.diffs

        def where(i: int) -> str:
            return s.timestamps[i] if self.by_time and s.timestamps else f"point {i + 1}"

        parts = []
        for i, value in diffs[:3]:
            if value is None:
                parts.append(f"{where(i)}: shown {_number(shown[i])}, {self.table} has no row at that time")
            else:
                at = " at that time" if self.by_time else ""
                parts.append(f"{where(i)}: shown {_number(shown[i])}, {self.what}{at} is {_number(value)}")
        more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
        total = self.compared.equal + len(diffs)
        how = f" read as {self.reading}" if self.reading else ""
        return f"closest is {self.what}{how} of {self.table}: {self.compared.equal} of {total} values equal; " + \
            "; ".join(parts) + more


def _closer(best: _Best | None, candidate: _Best) -> _Best:
    return candidate if best is None or candidate.compared.equal > best.compared.equal else best


@dataclass
class _Trace:
    """Where a channel is in the named records."""

    columns: set[str]
    best: _Best | None
    spans: list[Span]  # dates of the stretch in the record (a channel without timestamps)
    records: tuple[str, ...] = ()  # the records it is in


def _trace(s: Series, stamps: Stamps, tables: list[Table], records: _Records) -> _Trace:
    """The columns a raw channel is, at its timestamps (or as a stretch), in the first of `tables`
    (the named records joined, then each alone) where it is one."""
    shown = np.asarray(s.values, dtype=float)
    tolerance = Tolerance.of(shown, _RAW_RTOL)
    best: _Best | None = None
    for table in tables:
        if stamps.readings is not None and table.timeline is None and len(table.records) > 1:
            continue  # records on the same dates, one after another: a dated channel is in one of them
        by_time = stamps.readings is not None and table.timeline is not None
        rows = records.candidates(table, s, stamps.readings) if by_time else None  # type: ignore[arg-type]
        traced: set[str] = set()
        spans: list[Span] = []
        for column, values in table.columns.items():
            reading = Reading(values, table.timeline if by_time else None, column)
            compared = compare(reading, shown, stamps.readings if by_time else None, tolerance, rows)
            if compared.ok:
                traced.add(column)
                if not by_time and table.timeline is not None:
                    spans += [(table.timeline.starts[o], table.timeline.ends[o + len(shown) - 1], table.timeline.step())
                              for o in compared.offsets]
            else:
                best = _closer(best, _Best(compared, table.label, column, by_time))
        if traced:
            return _Trace(traced, None, spans, table.records)
    return _Trace(set(), best, [])


def _channel_tables(item: Item, s: Series) -> list[Table]:
    """The item's other channels, each a table of one column (what a derivation on generated data reads)."""
    tables = []
    for other in item.series:
        if other is s or other.derived is not None:
            continue
        stamps = channel_stamps(other)
        timeline = Timeline.read(other.timestamps) if stamps.readings is not None and other.timestamps else None
        tables.append(Table(f"channel {other.name!r}", {other.name: np.asarray(other.values, dtype=float)}, timeline,
                            {other.name: canonical_unit(other.unit)}))
    return tables


@dataclass(frozen=True)
class _Problem:
    kind: str
    message: str
    unverified: bool = False  # a derivation the audit could not check (rejects or flags, by setting)


def _verify_derived(s: Series, stamps: Stamps, item: Item, tables: list[Table], data: RecordData,
                    records: _Records) -> _Problem | None:
    """Whether a derived channel is what its recipe computes on the named records (or, on generated
    data or where no records are named, on the item's other channels)."""
    text = s.derived or ""
    columns = {c for t in tables for c in t.columns} | set(data.units)
    channel_tables = _channel_tables(item, s) if data.generated_series or not named_record_ids(item) else []
    columns |= {c for t in channel_tables for c in t.columns}
    recipes = parse_recipe(text, columns)
    if not recipes:
        known = ", ".join(sorted(columns)[:12]) or "none"
        return _Problem("unverified_derivation", f"channel {s.name!r} declares derived={text!r}, which the audit "
                                                 f"cannot read as a recipe on the columns of the named records "
                                                 f"({known}); {_RECIPE_HINT}", unverified=True)
    shown = np.asarray(s.values, dtype=float)
    tolerance = Tolerance.of(shown, _DERIVED_RTOL)
    best: _Best | None = None
    computed = False
    for table in tables or channel_tables:
        by_time = stamps.readings is not None and table.timeline is not None
        for recipe in recipes:
            for reading in records.readings(table, recipe) if tables else readings(recipe, table):
                computed = True
                by_time_here = by_time and reading.timeline is not None
                compared = compare(reading, shown, stamps.readings if by_time_here else None, tolerance)
                if compared.ok:
                    return _unit_of_derived(s, reading)
                best = _closer(best, _Best(compared, table.label, describe(recipe), by_time_here, reading.label))
    if not computed or best is None:
        where = "the named records" if tables else "the item's other channels" if channel_tables else \
            "no records (the item names none: metadata={'record_ids': [...]})"
        return _Problem("unverified_derivation", f"channel {s.name!r} declares derived={text!r} "
                                                 f"({' or '.join(describe(r) for r in recipes[:2])}), which cannot be "
                                                 f"computed from {where}: name the records it is made from, and the "
                                                 "columns as the handler spells them", unverified=True)
    return _Problem("wrong_derivation", f"channel {s.name!r} is not {text!r} of the named data ({best.quote(s)}); "
                                        "show what the text says, or say what the values are (a window of N is "
                                        "'N-day', a trailing window ends on its day)")


_SCALE_WORD = re.compile(r"\b(hundred|thousand|million|billion)s?\b", re.I)


def _name_as_recipe(s: Series, ids: list[str]) -> str:
    """The channel's name without the words that name its record: "AAPL close 5-day mean" -> "close 5-day mean"."""
    record_words = set().union(*(_record_tokens(rid) for rid in ids)) if ids else set()
    return " ".join(w for w in s.name.split() if w.casefold() not in record_words)


def _made_as(s: Series, texts: list[str], stamps: Stamps, item: Item, tables: list[Table], data: RecordData,
             records: _Records) -> bool:
    return any(_verify_derived(s.model_copy(update={"derived": text}), stamps, item, tables, data, records) is None
               for text in texts if text.strip())


def _made_as_named(s: Series, stamps: Stamps, item: Item, ids: list[str], tables: list[Table], data: RecordData,
                   records: _Records) -> bool:
    """Whether a channel that is no column as it is, with no derived=, is made the way its own name and
    unit say: "temp_max 7-day mean", or "AAPL volume" in "million shares" (the column / 1e6). The name is
    recomputed like a derived= text, so a name that says 7 days over a 5-day mean is still data that is
    not what it says."""
    name = _name_as_recipe(s, ids)
    scaled = [f"{name} in {m[1].lower()}s" for m in _SCALE_WORD.finditer(s.unit or "")][:1]
    return _made_as(s, [name, *scaled], stamps, item, tables, data, records)


def _name_belies_derivation(s: Series, stamps: Stamps, item: Item, ids: list[str], tables: list[Table],
                            data: RecordData, records: _Records) -> _Problem | None:
    """A derived channel whose name is itself a recipe ("passengers 3-month mean") that its values are
    not (a 3-month median, declared so in derived=): readers and judges read the name."""
    name = _name_as_recipe(s, ids)
    said = parse_recipe(name, {c for t in tables for c in t.columns} | set(data.units))
    if not said or any(isinstance(r, Column) for r in said) or _made_as(s, [name], stamps, item, tables, data, records):
        return None
    return _Problem("wrong_name", f"channel {s.name!r} is named as {describe(said[0])} but is {s.derived!r}; name "
                                  "the channel after what its values are")


def _unit_of_derived(s: Series, reading: Reading) -> _Problem | None:
    shown = canonical_unit(s.unit)
    if shown is None or reading.unit is None or shown.quantity != reading.unit.quantity or shown == reading.unit:
        return None
    return _Problem("wrong_unit", f"channel {s.name!r} (derived={s.derived!r}) is in {reading.unit.name} but is "
                                  f"labelled {s.unit!r}; write unit={reading.unit.name!r}, or convert it and say so "
                                  f"(derived=\"... in {shown.name}\")")


def _names_other_column(s: Series, traced: set[str], columns: set[str]) -> str | None:
    name = f" {normal_text(s.name)} "
    named = {c for c in columns if f" {normal_text(c)} " in name}
    if not named or named & traced:
        return None
    return sorted(named)[0]


def _record_tokens(rid: str) -> set[str]:
    return {t for t in re.split(r"[^0-9a-z]+", rid.casefold()) if len(t) >= 2 and re.search(r"[a-z]", t)}


def _names_other_record(s: Series, traced: tuple[str, ...], ids: list[str]) -> str | None:
    """A record the channel's name names ("AAPL adj_close": the one named record whose id holds "aapl")
    when the channel shows another named record."""
    tokens = {rid: _record_tokens(rid) for rid in dict.fromkeys(ids)}
    words = set(re.split(r"[^0-9a-z]+", s.name.casefold()))
    named = {rid for rid, own in tokens.items()
             if own & words - set().union(*(other for r, other in tokens.items() if r != rid))}
    return None if not named or named & set(traced) else sorted(named)[0]


def _unit_clash(s: Series, column_unit: str | None) -> str | None:
    if not s.unit or not column_unit:
        return None
    shown, declared = canonical_unit(s.unit), canonical_unit(column_unit)
    if shown is not None and declared is not None:
        return None if shown == declared else f"{s.unit!r} ({shown.name}) where the column is in {declared.name}"
    if (shown is None) != (declared is None):
        return f"{s.unit!r} where the column is in {column_unit!r}"
    return None


def _raw_problems(s: Series, stamps: Stamps, ids: list[str], tables: list[Table], data: RecordData,
                  records: _Records) -> tuple[list[_Problem], str | None, list[Span]]:
    """What is wrong with a channel that says it is a column as it is: (problems, the column's unit,
    the dates it covers in the record when it has no timestamps)."""
    trace = _trace(s, stamps, tables, records)
    if not trace.columns:
        closest = trace.best.quote(s) if trace.best else "no stretch of any column lines up with it"
        at = "at its timestamps " if stamps.readings is not None else ""
        return [_Problem("untraced", f"channel {s.name!r} is not {at}a column of {', '.join(repr(r) for r in ids)} "
                                     f"({closest}); show the column's values at their own timestamps, or, if the "
                                     f"channel is made from them, say how: {_DERIVED_HINT}")], None, []
    problems = []
    shown = sorted(trace.columns)[0]
    other = _names_other_column(s, trace.columns, {c for t in tables for c in t.columns})
    if other is not None:
        problems.append(_Problem("wrong_name", f"channel {s.name!r} names column {other!r} but shows column {shown!r}; "
                                               "name it after the column it shows (or show the column it names)"))
    record = _names_other_record(s, trace.records, ids)
    if record is not None:
        problems.append(_Problem("wrong_name", f"channel {s.name!r} names record {record!r} but shows record "
                                               f"{' + '.join(trace.records)!r}; name each channel after the record it "
                                               "shows (build names and values from one list)"))
    units = {data.units[c] for c in trace.columns if c in data.units}
    column_unit = units.pop() if len(units) == 1 else None
    clash = _unit_clash(s, column_unit)
    if clash is not None:
        problems.append(_Problem("wrong_unit", f"channel {s.name!r} (column {shown!r}) is labelled {clash}; write "
                                               f"unit={column_unit!r}, or convert and say so: {_DERIVED_HINT}"))
    return problems, column_unit, trace.spans


def _item_problems(item: Item, data: RecordData, records: _Records) -> list[_Problem]:
    problems: list[_Problem] = []
    ids = named_record_ids(item)
    tables = records.tables(ids)
    shown_units: dict[str, set[Unit]] = {}  # quantity -> units of the channels shown
    implied: list[Span] = []  # dates of channels found without timestamps
    timed = False
    for s in item.series:
        declared = s.derived is not None
        stamps = channel_stamps(s)
        timed = timed or stamps.readings is not None
        traced = declared or not data.generated_series
        if stamps.unreadable is not None and (not data.generated_series or ids):
            problems.append(_Problem("unreadable_timestamps", f"channel {s.name!r} has the timestamp "
                                                              f"{stamps.unreadable!r}, a date in a format the audit "
                                                              "does not read: write ISO dates ('2013-03-11', "
                                                              "'2013-03-11 14:00') or 'Mar 11, 2013'"))
            continue
        if declared and not (s.derived or "").strip():
            problems.append(_Problem("blank_derived", f"channel {s.name!r} declares derived= but not how it was made; "
                                                      f"write {_DERIVED_HINT}"))
            continue
        if traced and any(rid in data.missing for rid in ids):
            problems.append(_Problem("untraced", f"metadata names record(s) the handler does not have: "
                                                 f"{sorted(set(ids) & set(data.missing))}"))
            continue
        if traced and ids and not tables:  # named records over the fetch limit: not checked
            continue
        column_unit = None
        if declared:
            problem = _verify_derived(s, stamps, item, tables, data, records) or \
                _name_belies_derivation(s, stamps, item, ids, tables, data, records)
            if problem is not None:
                problems.append(problem)
                if problem.kind != "wrong_unit":
                    continue
        elif traced:
            if not ids:
                problems.append(_Problem("untraced", f"channel {s.name!r} names no records: give the item "
                                                     "metadata={'record_ids': [rid, ...]} for the records it shows, "
                                                     f"or, if it is not a stretch of a column, {_DERIVED_HINT}"))
                continue
            found, column_unit, spans = _raw_problems(s, stamps, ids, tables, data, records)
            if any(p.kind == "untraced" for p in found) and _made_as_named(s, stamps, item, ids, tables, data, records):
                continue
            problems += found
            implied += spans
            if any(p.kind == "untraced" for p in found):
                continue
        unit = canonical_unit(s.unit) or canonical_unit(column_unit)
        if unit is not None:
            shown_units.setdefault(unit.quantity, set()).add(unit)
        for named in units_named(f"{s.name} {s.derived or ''}"):
            if unit is not None and named.quantity == unit.quantity and named != unit:
                problems.append(_Problem("wrong_unit", f"channel {s.name!r} is in {unit.name} but its label names "
                                                       f"{named.name}"))
    if implied and not timed:  # the question's dates only: options are what a reader who sees no dates guesses
        for where, date in named_outside(item.question, [], item.context, implied)[:1]:
            problems.append(_Problem("dates_not_shown", f"{where} names {date}, but the channel shown (found in the "
                                                        f"record without timestamps) covers "
                                                        f"{_span_text(implied)}; name the dates shown, give the channel "
                                                        "its timestamps, or declare the date in context="))
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


def _span_text(spans: Sequence[Span]) -> str:
    first, end, _ = spans[0]
    last = end - np.timedelta64(1, "s")
    return f"{str(first)[:10]} to {str(last)[:10]}" + (f" (or {len(spans) - 1} other stretches)" if len(spans) > 1
                                                        else "")


def check_fidelity(items: Sequence[Item], data: RecordData, config: AuditConfig | None = None) -> Finding:
    """Whether every item shows the data its metadata names, at its timestamps, under its own name and
    unit, or made from it as its `derived=` says."""
    config = config or VerificationSettings().audit
    if data.error is not None:
        return Finding(check="data_fidelity", passed=False, message=data.error)
    failed: dict[str, list[tuple[Item, _Problem]]] = {}
    flagged: list[tuple[Item, _Problem]] = []
    records = _Records(data)
    for item in items:
        for problem in _item_problems(item, data, records):
            if problem.unverified and config.unverified_derivation == "flag":
                flagged.append((item, problem))
            else:
                failed.setdefault(problem.kind, []).append((item, problem))
    unchecked = f"; {len(data.skipped)} records over the size limit not compared" if data.skipped else ""
    if flagged:
        item, problem = flagged[0]
        unchecked += (f"; flagged, not checked: {len({id(i) for i, _ in flagged})} items show a derivation the audit "
                      f"could not verify, e.g. {_short(item.question)!r}: {problem.message}")
    if not failed:
        return Finding(check="data_fidelity", passed=True,
                       message=f"every channel of {len(items)} items is a named record's column at its timestamps, "
                               f"made as its derived= says, or generated{unchecked}")
    kinds = sorted(failed, key=lambda k: -len({id(i) for i, _ in failed[k]}))
    bad_items = len({id(i) for hits in failed.values() for i, _ in hits})
    item, problem = failed[kinds[0]][0]
    also = [f"{len({id(i) for i, _ in failed[k]})} items {k.replace('_', ' ')}" for k in kinds[1:]]
    return Finding(check="data_fidelity", passed=False,
                   message=f"{bad_items} of {len(items)} items show data that is not what they say "
                           f"({len({id(i) for i, _ in failed[kinds[0]]})} {kinds[0].replace('_', ' ')}"
                           + (f"; {'; '.join(also)}" if also else "") + f"), e.g. {_short(item.question)!r} "
                           f"(records {named_record_ids(item) or 'none named'}): {problem.message}{unchecked}")

