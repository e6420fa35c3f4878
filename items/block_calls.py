"""What a building block records about its call, and the registry of blocks that can be replayed.

A block registered with `replayable` returns its result (any dataclass with a `call` field, such
as `blocks.BlockResult`) with `call`: which block ran, on which rows of which records (record id, channel, first and last row, their first and last timestamps)
and with which other arguments, as plain JSON (`BlockCall`). `ask` writes it into the item's
metadata under `CALL_KEY`. The record is a claim made by template code, never evidence: a trusted
replay reads the rows again from the handler, runs the registered block on them with the recorded
arguments, and compares what it makes with the item. Only the block's name (looked up in
`REPLAYABLE`), its arguments (JSON scalars, bound to the block's signature) and the rows are
taken from the record; no value or result it holds is used.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

__all__ = ["CALL_KEY", "REPLAYABLE", "BlockCall", "WindowRows", "call_metadata", "replayable", "window_parameters"]

CALL_KEY = "block_call"  # the item metadata key of the block call that made the item
MAX_ARG_CHARS = 200
MAX_WINDOWS = 12  # windows one parameter may take (a reference compared with candidates)

Scalar = StrictBool | StrictInt | StrictFloat | Annotated[StrictStr, Field(max_length=MAX_ARG_CHARS)] | None


class WindowRows(BaseModel):
    """The rows a block read: rows `start` to `end - 1` of `channel` of record `record_id`, dated
    `first` to `last`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    record_id: StrictStr | StrictInt
    channel: Annotated[StrictStr, Field(max_length=MAX_ARG_CHARS)]
    start: StrictInt = Field(ge=0)
    end: StrictInt = Field(ge=1)
    first: Annotated[StrictStr, Field(max_length=MAX_ARG_CHARS)]
    last: Annotated[StrictStr, Field(max_length=MAX_ARG_CHARS)]


Name = Annotated[StrictStr, Field(max_length=MAX_ARG_CHARS)]


class BlockCall(BaseModel):
    """One block call: its name, the rows of each window parameter (a list for a parameter that
    takes several windows), its other arguments by name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    block: Name
    windows: dict[Name, WindowRows | Annotated[list[WindowRows], Field(min_length=1, max_length=MAX_WINDOWS)]] = Field(
        min_length=1, max_length=4)
    args: dict[Name, Scalar] = Field(default_factory=dict, max_length=16)


# the blocks a replay may run, by name: each takes its windows first, then JSON-scalar arguments
REPLAYABLE: dict[str, Callable[..., Any]] = {}

Block = TypeVar("Block", bound=Callable[..., Any])


_WINDOW_WORD = re.compile(r"\bWindow\b")


def window_parameters(block: Callable[..., Any]) -> list[str]:
    """The names of `block`'s parameters that take windows: annotated `Window`, or a type that names
    it (`Sequence[Window]`, `Window | Sequence[Window]`), as a class or as a string annotation."""
    def text(annotation: Any) -> str:
        return annotation.__name__ if isinstance(annotation, type) else str(annotation)

    return [name for name, p in inspect.signature(block).parameters.items()
            if _WINDOW_WORD.search(text(p.annotation))]


def _scalar(value: Any) -> tuple[bool, Any]:
    """(recordable, the value as plain JSON): numpy scalars become Python ones; non-finite floats and
    other types are not recordable."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return (not isinstance(value, str) or len(value) <= MAX_ARG_CHARS), value
    if isinstance(value, float):
        return math.isfinite(value), value
    return False, None


def _rows(window: Any) -> WindowRows | None:
    if not all(hasattr(window, name) for name in ("record_id", "channel", "start", "end", "first", "last")):
        return None
    record_id = window.record_id.item() if isinstance(window.record_id, np.generic) else window.record_id
    if type(record_id) not in (str, int):
        return None
    try:
        return WindowRows(record_id=record_id, channel=window.channel, start=int(window.start), end=int(window.end),
                          first=window.first, last=window.last)
    except ValueError:
        return None


def _window_rows(value: Any) -> WindowRows | list[WindowRows] | None:
    """The rows of a window argument (one window, or a list or tuple of them); None: not windows."""
    if isinstance(value, list | tuple):
        rows = [_rows(window) for window in value]
        return None if not rows or any(r is None for r in rows) else rows  # type: ignore[return-value]
    return _rows(value)


def _call(name: str, signature: inspect.Signature, windows: list[str], args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> BlockCall | None:
    """The record of one call, None when an argument is no JSON scalar or a window no record's rows."""
    bound = signature.bind(*args, **kwargs)
    rows, plain = {}, {}
    for key, value in bound.arguments.items():
        if key in windows:
            row = _window_rows(value)
            if row is None:
                return None
            rows[key] = row
            continue
        ok, value = _scalar(value)
        if not ok:
            return None
        plain[key] = value
    return BlockCall(block=name, windows=rows, args=plain)


def replayable(block: Block) -> Block:
    """Register `block` (a function of one or more `Window`s and JSON-scalar arguments that returns a
    result dataclass with a `call` field, or None) as replayable under its name: each result it
    returns carries the record of its call (`BlockCall`, None when an argument cannot be recorded),
    and a trusted replay may run it again by name. The block must be deterministic (no generator:
    draw random arguments before the call) and its result's `question` and `shown` must say
    everything the key depends on: the replay compares them with the item. Its module must be
    imported wherever items are replayed (the registry fills on import)."""
    name = block.__name__
    windows = window_parameters(block)
    if not windows:
        raise TypeError(f"block {name} takes no Window: a replay would have no rows to read")
    if name in REPLAYABLE:
        raise ValueError(f"a replayable block named {name} is already registered")
    signature = inspect.signature(block)

    @functools.wraps(block)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        result = block(*args, **kwargs)
        if result is None:
            return None
        call = _call(name, signature, windows, args, kwargs)
        return dataclasses.replace(result, call=None if call is None else call.model_dump(mode="json"))

    REPLAYABLE[name] = recorded
    return recorded  # type: ignore[return-value]


def call_metadata(result: Any) -> dict[str, Any]:
    """What `ask` adds to an item's metadata for `result`: its recorded call under `CALL_KEY`, or
    nothing when it has none."""
    call = getattr(result, "call", None)
    return {CALL_KEY: call} if call is not None else {}
