"""Trusted replay of building-block items: their keys re-derived without a model.

An item made by `ask` from a replayable block carries the block call that made it (`block_calls`:
the block's name, the rows it read, its other arguments). That record comes from template code
and proves nothing by itself, so the replay takes from it only what to run: the block is looked up
by name in `REPLAYABLE` (trusted code, never the template's), its rows are cut again from the
handler's own data (`RecordData`, read by the trusted fetch template) and its arguments, JSON
scalars, are bound to the block's signature. The block's result on those rows (any result with the
`question` and `shown` series it writes and the `value` its key states) is then compared with the
whole item as a reader sees it:

- the question, the series shown (values, timestamps, name, unit) and the kind must be exactly
  those the block writes for those rows, and the item must have no context (a context could change
  what the question asks); otherwise the item is no item of that call (``unverifiable``), whatever
  its record says;
- then its key must be the one option the block's value fits (`rederivation.fits`, within each
  option's written rounding): ``agree``; another option or none: ``disagree``; several: ``ambiguous``.

An item with no record is ``absent``. A template that records a call and then swaps the key, edits
the question, shows other rows or points the record at another record cannot reach ``agree``: it
either shows the block's own question and data, and then its key is checked against the value
computed here, or it does not, and the replay vouches for nothing. `replay_verdict` makes the stage's
verdict: every item agrees, or some item disagrees (a wrong key, shown by that item); else None (the
items go to the solver model as before).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ValidationError

from itemsmith.items.block_calls import CALL_KEY, REPLAYABLE, BlockCall, WindowRows, window_parameters
from itemsmith.items.blocks import Window, date_labels, window_of
from itemsmith.items.schema import Item, ItemKind, RederivationReport, RederivedItem, Series
from itemsmith.verification.audit.record_data import RecordData
from itemsmith.verification.rederivation import fits, verdict_of
from itemsmith.verification.settings import RederivationConfig

__all__ = ["REPLAY_SOLVER", "Replayed", "block_record_ids", "replay_block_items", "replay_item", "replay_verdict"]

REPLAY_SOLVER = "trusted block replay"
# one replayed disagreement is a wrong key (no solver's mistake to allow for); items not replayed are
# reported as unsolved and never make the verdict "not re-derivable" by themselves
_EXACT = RederivationConfig(max_disagreement=0.0, max_ambiguous=0.0, max_failed=1.0)
_ISO_SECOND = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
_BLOCK_ERRORS = (ValueError, TypeError, IndexError, ArithmeticError)

Outcome = Literal["agree", "disagree", "ambiguous", "absent", "unverifiable"]


class Replayed(BaseModel):
    """One item's replay: the outcome, the value the block computes on the handler's rows, the
    options it fits, and why an item was not replayed."""

    outcome: Outcome
    value: str | float | None = None
    fits: list[int] = []
    reason: str | None = None


def _call_of(item: Item) -> BlockCall | None | str:
    """The item's recorded call; None when it has none; a text (why) when the record is malformed."""
    raw = item.metadata.get(CALL_KEY)
    if raw is None:
        return None
    try:
        return BlockCall.model_validate(raw)
    except ValidationError as exc:
        return f"its block record is malformed ({exc.error_count()} errors)"


def block_record_ids(items: Iterable[Item]) -> list[str | int]:
    """The records the items' block calls read (what to fetch for `replay_block_items`)."""
    ids: list[str | int] = []
    for item in items:
        call = _call_of(item)
        if isinstance(call, BlockCall):
            ids += [rows.record_id for rows in _all_rows(call) if rows.record_id not in ids]
    return ids


def _all_rows(call: BlockCall) -> list[WindowRows]:
    return [rows for value in call.windows.values() for rows in (value if isinstance(value, list) else [value])]


def _labels(stamps: list[str]) -> list[str]:
    """The fetched index as `date_labels` writes it in the sandbox (a datetime index comes as ISO
    seconds; any other as its text)."""
    if stamps and all(_ISO_SECOND.match(s) for s in stamps):
        return date_labels(pd.DatetimeIndex(stamps))
    return stamps


def _window(rows: WindowRows, data: RecordData) -> Window | str:
    """The recorded rows cut again from the handler's data, or why they cannot be."""
    record = data.records.get(str(rows.record_id))
    if record is None:
        return f"the handler serves no record {rows.record_id!r} (or it was too large to fetch)"
    if rows.channel not in record.columns:
        return f"record {rows.record_id!r} has no numeric column {rows.channel!r}"
    values, dates = record.values(rows.channel), _labels(record.stamps())
    if not rows.start < rows.end <= len(values) or len(dates) != len(values):
        return f"rows {rows.start} to {rows.end - 1} are not rows of record {rows.record_id!r}"
    if (dates[rows.start], dates[rows.end - 1]) != (rows.first, rows.last):
        return (f"rows {rows.start} to {rows.end - 1} of record {rows.record_id!r} are dated {dates[rows.start]} to "
                f"{dates[rows.end - 1]}, not {rows.first} to {rows.last}")
    if not np.isfinite(values[rows.start:rows.end]).all():
        return f"rows {rows.start} to {rows.end - 1} of record {rows.record_id!r} have missing values"
    unit = str(data.units.get(rows.channel, "") or "")
    return window_of(rows.record_id, rows.channel, unit, values, dates, rows.start, rows.end)


def _windows(value: WindowRows | list[WindowRows], data: RecordData) -> Window | list[Window] | str:
    """One window argument cut again (a list for a list), or why it cannot be."""
    if not isinstance(value, list):
        return _window(value, data)
    windows = []
    for rows in value:
        window = _window(rows, data)
        if isinstance(window, str):
            return window
        windows.append(window)
    return windows


def _run(call: BlockCall, data: RecordData) -> Any:
    """The registered block's result on the rows it names with its recorded arguments (a result with
    a `question`, the `shown` series and a `value`), or a text: why not."""
    block = REPLAYABLE.get(call.block)
    if block is None:
        return f"{call.block!r} is no replayable block"
    names = window_parameters(block)
    if not set(call.windows) <= set(names) or set(call.args) & set(names):
        return f"the record's windows are not {call.block}'s window parameters ({', '.join(names)})"
    windows = {}
    for name, value in call.windows.items():
        cut = _windows(value, data)
        if isinstance(cut, str):
            return cut
        windows[name] = cut
    try:
        bound = inspect.signature(block).bind(**windows, **call.args)
        result = block(*bound.args, **bound.kwargs)
    except _BLOCK_ERRORS as exc:
        return f"{call.block} refuses the recorded arguments ({type(exc).__name__}: {exc})"
    if result is None or not all(hasattr(result, name) for name in ("question", "shown", "value")):
        return f"{call.block} makes no result on these rows (a tie, no day passes, or no clear answer)"
    return result


def _shown(result: Any) -> list[Series]:
    return [Series.model_validate(channel) for channel in result.shown]


def _differs(item: Item, result: Any) -> str | None:
    """What of the item is not what the block writes for these rows (None: nothing)."""
    if item.kind is not ItemKind.mc:
        return f"it is a {item.kind.value} item; blocks make multiple-choice items"
    if item.question != result.question:
        return "its question is not the block's question for the recorded rows"
    if item.series != _shown(result):
        return "its series are not the recorded rows of the handler's data"
    if item.context is not None:
        return "it has a context, which the block does not write"
    return None


def replay_item(item: Item, data: RecordData) -> Replayed:
    """One item replayed (see the module docstring)."""
    call = _call_of(item)
    if call is None:
        return Replayed(outcome="absent", reason="it records no block call")
    if isinstance(call, str):
        return Replayed(outcome="unverifiable", reason=call)
    result = _run(call, data)
    if isinstance(result, str):
        return Replayed(outcome="unverifiable", reason=result)
    why = _differs(item, result)
    value = result.value if isinstance(result.value, str) else float(result.value)  # a count, a mean, a date
    if why is not None:
        return Replayed(outcome="unverifiable", value=value, reason=why)
    fitted = fits(value, item.options)
    outcome: Outcome = ("agree" if fitted == [item.answer_index] else "ambiguous" if len(fitted) > 1
                        else "disagree")
    return Replayed(outcome=outcome, value=value, fits=fitted)


def replay_block_items(items: Sequence[Item], data: RecordData) -> list[Replayed]:
    """Each item replayed on the handler's data (`data`: `fetch_record_data` of `block_record_ids`)."""
    if data.error is not None:
        return [Replayed(outcome="absent" if _call_of(item) is None else "unverifiable", reason=data.error)
                for item in items]
    return [replay_item(item, data) for item in items]


def _judged(seed: int, index: int, item: Item, replayed: Replayed) -> RederivedItem:
    outcome = replayed.outcome if replayed.outcome in ("agree", "disagree", "ambiguous") else "failed"
    return RederivedItem(seed=seed, index=index, question=item.question, options=item.options, key=item.answer_index,
                         value=replayed.value, fits=replayed.fits, error=replayed.reason,
                         outcome=outcome)


def replay_verdict(drawn: Sequence[tuple[int, Item]], replayed: Sequence[Replayed], *, seeds: Sequence[int] = (),
                   sizes: Sequence[int] = ()) -> RederivationReport | None:
    """The stage's verdict from the replay of the drawn (seed, item) pairs: ``agrees`` when every
    item replays and agrees; ``disagrees`` / ``ambiguous`` when any replayed item does (whatever the
    others); None otherwise (not every item replayed: the solver model decides)."""
    outcomes = [r.outcome for r in replayed]
    if not outcomes or not (all(o == "agree" for o in outcomes) or {"disagree", "ambiguous"} & set(outcomes)):
        return None
    per_draw: dict[int, int] = {}
    judged = []
    for (seed, item), result in zip(drawn, replayed, strict=True):
        index = per_draw.get(seed, 0)
        per_draw[seed] = index + 1
        judged.append(_judged(seed, index, item, result))
    return verdict_of(judged, solver=REPLAY_SOLVER, program=None, config=_EXACT, seeds=seeds, sizes=sizes,
                      replayed=True)

