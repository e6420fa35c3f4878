"""Reading a benchmark file's raw rows one at a time: a JSON array or JSON lines, streamed from
disk (the file is never held whole), or a local Hugging Face dataset.

Anything a JSON parser accepts but a row cannot hold is kept as a marker the row's checks name
with its column, instead of failing the whole file: an integer too long for a number
(`Unrepresentable`), ``NaN`` / ``Infinity`` (`Unrepresentable` too), and nesting deeper than the
parser goes (a `RowError` for that row, naming the column it is in). A JSON array whose syntax
breaks stops there, with the row it broke in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

__all__ = ["MAX_INT_DIGITS", "RowError", "Unrepresentable", "local_source", "read_json_rows", "shown"]

# digits of the longest integer kept as a number: a float holds up to about 1e308
MAX_INT_DIGITS = 300
_CHUNK = 1 << 20
_SHOWN = 80
_SPACE = re.compile(r"\s*")


class RowError(ValueError):
    """What is wrong with one row; `field`: the row's column it is about (None: the row as a whole)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Unrepresentable:
    """A JSON value no item can hold: an integer of more than `MAX_INT_DIGITS` digits, NaN or infinity."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        if self.text.lstrip("-").isdigit():
            return f"<an integer of {len(self.text.lstrip('-'))} digits>"
        return self.text


def shown(value: Any) -> str:
    """`repr(value)`, cut short: a message quotes a bad value without repeating a huge one."""
    try:
        text = repr(value)
    except RecursionError:
        return "<a value nested too deeply>"
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def _integer(text: str) -> int | Unrepresentable:
    return int(text) if len(text) <= MAX_INT_DIGITS else Unrepresentable(text)


_DECODER = json.JSONDecoder(parse_int=_integer, parse_constant=Unrepresentable)


def _nested_column(text: str, start: int) -> str | None:
    """The top-level key of the object at `start` whose value nests deepest (a row too deep to parse)."""
    depth, deepest, key, column, last_string = 0, 0, None, None, None
    i, n = start, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            last_string = text[i + 1:end]
            i = end + 1
            continue
        if char == ":" and depth == 1:
            key = last_string
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, column = depth, key
        elif char in "]}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return column


def _decode(text: str, start: int = 0) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise RowError("the row is nested too deeply to read", _nested_column(text, start)) from None


def _lines(stream: TextIO) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            value, end = _decode(line, len(line) - len(line.lstrip()))
            if line[end:].strip():
                raise json.JSONDecodeError("extra data after the row", line, end)
            yield number, value
        except json.JSONDecodeError as exc:
            yield number, RowError(f"not valid JSON ({exc.msg} at column {exc.colno})")
        except RowError as exc:
            yield number, exc


class _Buffer:
    """A window on the stream: read more (doubling) until a value parses, drop what was consumed."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.text, self.pos, self.eof, self.chunk = stream, "", 0, False, _CHUNK

    def more(self) -> bool:
        if self.eof:
            return False
        block = self.stream.read(self.chunk)
        self.chunk *= 2 if len(self.text) - self.pos > self.chunk else 1
        self.eof = not block
        self.text = self.text[self.pos:] + block
        self.pos = 0
        return not self.eof

    def next_char(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos:self.pos + 1]


def _array(stream: TextIO, name: str) -> Iterator[tuple[int, Any]]:
    buffer = _Buffer(stream)
    buffer.next_char()
    buffer.pos += 1  # the '['
    number = 0
    while True:
        char = buffer.next_char()
        if char == "]":
            return
        if number and char == ",":
            buffer.pos += 1
            buffer.next_char()
        number += 1
        while True:
            try:
                value, end = _decode(buffer.text, buffer.pos)
            except json.JSONDecodeError as exc:
                if buffer.more():
                    continue
                raise RowError(f"{name}: not valid JSON in row {number} ({exc.msg})") from None
            except RowError as exc:
                end = _skip(buffer)
                yield number, exc
                buffer.pos = end
                break
            if end < len(buffer.text) or buffer.eof or not buffer.more():
                buffer.pos = end
                yield number, value
                break
        if buffer.next_char() not in {",", "]"}:
            raise RowError(f"{name}: not valid JSON after row {number} (expected ',' or ']')")


def _skip(buffer: _Buffer) -> int:
    """Where the value at the buffer's position ends (a row nested too deeply to parse)."""
    while True:
        depth, i, text = 0, buffer.pos, buffer.text
        while i < len(text):
            char = text[i]
            if char == '"':
                i += 1
                while i < len(text) and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
            elif char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        if not buffer.more():
            return len(buffer.text)


def read_json_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """The rows of a JSON array (numbered from 1) or of JSON lines (numbered by line), streamed; a
    `RowError` as a row: that row cannot be read (a `RowError` raised: the file as a whole)."""
    with path.open(encoding="utf-8") as stream:
        start = stream.read(_CHUNK).lstrip()[:1]
        stream.seek(0)
        yield from _array(stream, path.name) if start == "[" else _lines(stream)


def local_source(source: str, hf: bool) -> tuple[Path, str]:
    """The local file or folder a source names, and the split (a Hugging Face dataset: ``PATH[:split]``)."""
    if not hf or Path(source).exists():
        return Path(source), ""
    path, _, split = source.rpartition(":") if ":" in source else (source, "", "")
    return Path(path), split
