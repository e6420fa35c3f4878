"""Render an item's series, and the whole item, as the text a student model reads.

The nine text formats are those of Appendix F ("Time Series formatting") of
Fons et al., *Evaluating Large Language Models on Time Series Feature
Understanding* (Fons et al.). For one channel with timestamps 2020-01-01.. and
values 100, 105, 103, 103 (``decimals=0``) they read::

    csv      Date,Value\\n2020-01-01,100\\n...            (header, trailing newline)
    plain    Date:2020-01-01,Value:100\\n...              (no header, no trailing newline)
    tsv      Date\\tValue\\n2020-01-01\\t100\\n...
    json     {"Date":"2020-01-01","Value":100}\\n...      (one JSON object a line)
    markdown |Date|Value|\\n|---|---|\\n|2020-01-01|100|\\n...
    spaces   Date,Value\\n2020-01-01,1 0 0\\n...          (digits split by blanks, Gruver et al.)
    context  Date,Value\\n2020-01-01,[100]\\n...
    symbol   Date,Value,DirectionIndicator\\n2020-01-01,100,→\\n2020-01-02,105,↑\\n...
    custom   Date|Value\\n2020-01-01|100\\n...

A tenth format, not in the appendix, is for readers that judge an item rather than solve it
(the judge panel's default): each column's values on one line, the time axis stated once when
it is evenly spaced, about a quarter of ``plain``'s tokens::

    compact  Date: 2020-01-01 to 2020-01-04, every 1 day (4 values)\\nValue: 100, 105, 103, 103

Choices beyond the appendix, made here:

- Values are printed with ``decimals`` fixed decimals (``-0.00`` prints as ``0.00``).
  In ``spaces`` the decimal point and a minus sign are kept as tokens of their own
  (``-2.50`` -> ``- 2 . 5 0``): unlike Gruver et al. the reader is never told the
  precision, so dropping the point would change the numbers it reads.
- ``symbol`` compares the printed (rounded) values, so the arrows agree with what
  the reader sees; the first row has no predecessor and gets ``→``.
- Without timestamps the first column is ``Index`` holding the 0-based sample index.
  With timestamps the column is ``Date`` when every timestamp is a bare
  ``YYYY-MM-DD`` date and ``Time`` otherwise.
- One channel keeps the appendix's ``Value`` column. Several channels that share
  their time axis (same length and the same timestamps, or none) go side by side,
  one column per channel named after it (``symbol`` adds ``<name> DirectionIndicator``
  after each). Channels that do not share an axis get one block each, headed by a
  label line (``Series: name (unit: u)``) and separated by a blank line.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from itemsmith.items.schema import Item, Series
from itemsmith.items.text_format import TextFormat

__all__ = ["TextFormat", "downsample_item", "group_aligned", "option_letter", "render_item", "render_series",
           "series_label", "terminal_safe"]


UP, DOWN, FLAT = "↑", "↓", "→"
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# What a terminal would act on instead of showing: C0 controls but tab and newline (a
# carriage return overwrites the line), DEL, C1 controls (CSI), lone surrogates, and the
# bidirectional overrides/isolates that reorder what is shown.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f"
                              "\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` as it may be printed to a terminal: every character a terminal would
    interpret (escape sequences, carriage return, bidi overrides) shown as a visible escape
    (``\\x1b``, ``\\u202e``). The one sanitizer for error and item text the CLI prints."""
    return _TERMINAL_UNSAFE.sub(lambda m: ascii(m.group())[1:-1], str(text))


# --- the table every format renders ---------------------------------------------------------


@dataclass(frozen=True)
class _Table:
    """One block: a time column and one or more value columns of printed numbers."""

    time_header: str
    times: list[str]
    names: list[str]  # value column headers
    columns: list[list[str]]  # printed values, one list per column


def _numbers(values: Sequence[float], decimals: int) -> list[str]:
    """Each value with `decimals` decimals, never "-0.00" (a value that rounds to zero is "0.00")."""
    texts = list(map(f"{{:.{decimals}f}}".format, values))  # one format call a value: exports render millions
    return [text[1:] if text[0] == "-" and not text.strip("-0.") else text for text in texts]


def _table(group: Sequence[Series], decimals: int) -> _Table:
    first = group[0]
    if first.timestamps is not None:
        times = list(first.timestamps)
        header = "Date" if all(_DATE_RE.match(t) for t in times) else "Time"
    else:
        times = [str(i) for i in range(len(first.values))]
        header = "Index"
    names = ["Value"] if len(group) == 1 else [s.name for s in group]
    columns = [_numbers(s.values, decimals) for s in group]
    return _Table(header, times, names, columns)


def _rows(table: _Table) -> list[list[str]]:
    return [[t, *(col[i] for col in table.columns)] for i, t in enumerate(table.times)]


def _delimited(headers: list[str], rows: list[list[str]], sep: str) -> str:
    """Header and rows joined by `sep`, one line each, trailing newline; cells that
    would break the layout (separator, quote, newline) are quoted as in CSV."""
    def cell(text: str) -> str:
        if sep in text or '"' in text or "\n" in text or "\r" in text:
            buf = io.StringIO()
            csv.writer(buf, delimiter=sep, lineterminator="").writerow([text])
            return buf.getvalue()
        return text
    lines = [sep.join(cell(c) for c in line) for line in [headers, *rows]]
    return "".join(line + "\n" for line in lines)


def _spaced(number: str) -> str:
    return " ".join(number)


def _directions(column: list[str]) -> list[str]:
    values = [float(v) for v in column]
    out = [FLAT]
    for prev, cur in zip(values, values[1:]):
        out.append(UP if cur > prev else DOWN if cur < prev else FLAT)
    return out


# --- one function per format ----------------------------------------------------------------


def _fmt_csv(t: _Table) -> str:
    return _delimited([t.time_header, *t.names], _rows(t), ",")


def _fmt_tsv(t: _Table) -> str:
    return _delimited([t.time_header, *t.names], _rows(t), "\t")


def _fmt_custom(t: _Table) -> str:
    return _delimited([t.time_header, *t.names], _rows(t), "|")


def _fmt_plain(t: _Table) -> str:
    labelled = [[f"{header}:{cell}" for cell in column]
                for header, column in zip([t.time_header, *t.names], [t.times, *t.columns], strict=True)]
    return "\n".join(map(",".join, zip(*labelled, strict=True)))


def _fmt_json(t: _Table) -> str:
    def key(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)
    time_value = (lambda x: x) if t.time_header == "Index" else key
    lines = []
    for i, time in enumerate(t.times):
        fields = [f"{key(t.time_header)}:{time_value(time)}"]
        fields += [f"{key(name)}:{col[i]}" for name, col in zip(t.names, t.columns)]
        lines.append("{" + ",".join(fields) + "}\n")
    return "".join(lines)


def _fmt_markdown(t: _Table) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")
    headers = [t.time_header, *t.names]
    lines = ["|" + "|".join(cell(h) for h in headers) + "|", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["|" + "|".join(cell(c) for c in row) + "|" for row in _rows(t)]
    return "".join(line + "\n" for line in lines)


def _fmt_spaces(t: _Table) -> str:
    spaced = _Table(t.time_header, t.times, t.names, [[_spaced(v) for v in col] for col in t.columns])
    return _delimited([t.time_header, *t.names], _rows(spaced), ",")


def _fmt_context(t: _Table) -> str:
    wrapped = _Table(t.time_header, t.times, t.names, [[f"[{v}]" for v in col] for col in t.columns])
    return _delimited([t.time_header, *t.names], _rows(wrapped), ",")


def _fmt_symbol(t: _Table) -> str:
    if len(t.names) == 1:
        names = [*t.names, "DirectionIndicator"]
    else:
        names = [n for name in t.names for n in (name, f"{name} DirectionIndicator")]
    columns = [c for col in t.columns for c in (col, _directions(col))]
    return _delimited([t.time_header, *names], _rows(_Table(t.time_header, t.times, names, columns)), ",")


def _step_text(times: list[str]) -> str | None:
    """The one spacing of ISO timestamps (``1 day``, ``15 min``), or None when uneven or not ISO."""
    try:
        stamps = [_dt.datetime.fromisoformat(t) for t in times]
    except ValueError:
        return None
    steps = {b - a for a, b in zip(stamps, stamps[1:])}
    if len(steps) != 1:
        return None
    seconds = int(steps.pop().total_seconds())
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds > 0 and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if unit == 'day' and count != 1 else ''}"
    return None


def _fmt_compact(t: _Table) -> str:
    n = len(t.times)
    step = _step_text(t.times) if t.time_header != "Index" and n > 1 else None
    if t.time_header == "Index":
        axis = f"Index: 0 to {n - 1}"
    elif step is not None:
        axis = f"{t.time_header}: {t.times[0]} to {t.times[-1]}, every {step} ({n} values)"
    else:
        axis = f"{t.time_header}: {', '.join(t.times)}"
    return "\n".join([axis, *(f"{name}: {', '.join(col)}" for name, col in zip(t.names, t.columns))])


_FORMATTERS: dict[TextFormat, Callable[[_Table], str]] = {
    TextFormat.csv: _fmt_csv,
    TextFormat.plain: _fmt_plain,
    TextFormat.tsv: _fmt_tsv,
    TextFormat.json: _fmt_json,
    TextFormat.markdown: _fmt_markdown,
    TextFormat.spaces: _fmt_spaces,
    TextFormat.context: _fmt_context,
    TextFormat.symbol: _fmt_symbol,
    TextFormat.custom: _fmt_custom,
    TextFormat.compact: _fmt_compact,
}


# --- public API -----------------------------------------------------------------------------


def _text_format(fmt: TextFormat | str) -> TextFormat:
    if isinstance(fmt, TextFormat):
        return fmt
    try:
        return TextFormat(str(fmt).strip().lower())
    except ValueError:
        valid = ", ".join(f.value for f in TextFormat)
        raise ValueError(f"unknown text format {fmt!r}; valid formats: {valid}") from None


def _check_decimals(decimals: int) -> int:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative integer, got {decimals!r}")
    return decimals


def _as_list(series: Series | Sequence[Series]) -> list[Series]:
    return [series] if isinstance(series, Series) else list(series)


def group_aligned(series: Series | Sequence[Series]) -> list[list[Series]]:
    """Split channels into groups that share a time axis.

    All channels form one group when they have the same length and the same
    timestamps (or all have none); otherwise each channel is a group of its own.
    """
    channels = _as_list(series)
    if not channels:
        return []
    first = channels[0]
    if all(len(s.values) == len(first.values) and s.timestamps == first.timestamps for s in channels):
        return [channels]
    return [[s] for s in channels]


def series_label(group: Series | Sequence[Series]) -> str:
    """The label line for a block: ``Series: name (unit: u; derived: how), other``."""
    return "Series: " + ", ".join(_channel_label(s) for s in _as_list(group))


def _channel_label(s: Series) -> str:
    notes = [f"unit: {s.unit}"] if s.unit else []
    if s.derived and s.derived.strip():
        notes.append(f"derived: {s.derived.strip()}")
    return f"{s.name} ({'; '.join(notes)})" if notes else s.name


def render_series(series: Series | Sequence[Series], fmt: TextFormat | str = TextFormat.plain,
                  decimals: int = 2) -> str:
    """Render one or several channels as text in one of the nine formats.

    Channels sharing a time axis are printed side by side; otherwise each channel
    gets its own block under a ``Series: ...`` label line (see the module docstring).
    Timestamps are used when present, the 0-based sample index otherwise. Returns
    ``""`` for no channels. Raises ValueError for an unknown format (listing the
    valid ones) or a negative ``decimals``.
    """
    formatter = _FORMATTERS[_text_format(fmt)]
    decimals = _check_decimals(decimals)
    groups = group_aligned(series)
    if not groups:
        return ""
    if len(groups) == 1:
        return formatter(_table(groups[0], decimals))
    blocks = [formatter(_table(group, decimals)) for group in groups]
    trailing = "\n" if blocks[0].endswith("\n") else ""
    return "\n\n".join(f"{series_label(g)}\n{b.rstrip(chr(10))}" for g, b in zip(groups, blocks)) + trailing


def _kept_positions(group: Sequence[Series], max_points: int) -> list[int]:
    """Positions kept when a group of aligned channels is shortened to `max_points`: the first and
    the last, each channel's smallest and largest value, and evenly spaced ones in between."""
    n = len(group[0].values)
    must = {0, n - 1}
    for s in group:
        must |= {min(range(n), key=s.values.__getitem__), max(range(n), key=s.values.__getitem__)}
    others = [i for i in range(n) if i not in must]
    spaced = min(len(others), max(0, max_points - len(must)))
    return sorted(must | {others[int((j + 0.5) * len(others) / spaced)] for j in range(spaced)})


def downsample_item(item: Item, max_points: int) -> tuple[Item, str]:
    """The item as a model that reviews it reads it (the one rule for every reviewer): each group of
    aligned channels longer than `max_points` keeps `max_points` values (more only where several
    channels each add their extremes), evenly spaced over the whole series, with the first, the last,
    the smallest and the largest value always among them and the timestamps of those kept (the
    0-based positions where a series has none, so gaps stay visible). Returns the item and a note
    for the reader, empty when nothing was shortened. Students never get this view: they must be
    able to compute the answer from every value."""
    if max_points < 2:
        raise ValueError(f"max_points must be at least 2, got {max_points}")
    series: list[Series] = []
    notes: list[str] = []
    for group in group_aligned(item.series):
        n = len(group[0].values)
        if n <= max_points:
            series += group
            continue
        keep = _kept_positions(group, max_points)
        for s in group:
            times = [s.timestamps[i] for i in keep] if s.timestamps else [str(i) for i in keep]
            series.append(s.model_copy(update={"values": [s.values[i] for i in keep], "timestamps": times}))
            notes.append(f"{s.name}: {len(keep)} of {n} values")
    if not notes:
        return item, ""
    note = (f"(Series shortened for this review: {'; '.join(notes)}, evenly spaced, with the first, last, smallest "
            "and largest values kept; the times or positions show which.)\n")
    return item.model_copy(update={"series": series}), note


def option_letter(index: int) -> str:
    """``0 -> "A"``, ``1 -> "B"``, ..."""
    return chr(ord("A") + index)


def render_item(item: Item, fmt: TextFormat | str = TextFormat.plain, decimals: int = 2,
                include_series: bool = True, series_last: bool = False) -> str:
    """The prompt body a student model sees for one item.

    Sections, separated by blank lines: the item's context (if any); each block of
    series text under its ``Series: name (unit: u)`` label (unless
    ``include_series=False``, the "blind" variant, which drops the series entirely);
    the question; the options as ``A) ...``, ``B) ...`` one a line. ``series_last``
    puts the series blocks after the options. No trailing newline.
    """
    formatter = _FORMATTERS[_text_format(fmt)]
    decimals = _check_decimals(decimals)
    context = [item.context.strip()] if item.context and item.context.strip() else []
    blocks = [f"{series_label(group)}\n{formatter(_table(group, decimals)).rstrip(chr(10))}"
              for group in group_aligned(item.series)] if include_series else []
    asked = [item.question.strip(), "\n".join(f"{option_letter(i)}) {o}" for i, o in enumerate(item.options))]
    return "\n\n".join([*context, *asked, *blocks] if series_last else [*context, *blocks, *asked])
