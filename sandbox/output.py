"""Plain-JSON output: converted and checked in the child, parsed and checked again on the host.

Only exact `dict`, `list`, `str`, `int`, `float`, `bool` and `None` cross the boundary. The
checks look at `type(x)` before touching a value, so an object with a hostile `__eq__`,
`__hash__`, `__str__` or `__iter__` is rejected without any of its methods being called.

Strict JSON: no NaN/Infinity, integers within the signed 64-bit range (JSON readers such as
PostgreSQL and browsers cannot all hold more; a 10**5000 would also stall the parser), and
no string (value or key) holding a control character or lone surrogate
(`schema.CONTROL_CHARACTERS`: ESC sequences would reach terminals and a lone surrogate is not
UTF-8). Free text the sandbox reports itself (printed output, error messages) is cleaned with
`clean_text` instead of refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from itemsmith.items.schema import CONTROL_CHARACTERS

MAX_DEPTH = 32
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1

_SCALARS = (str, int, float, bool, type(None))
# numpy scalar types whose .item() is plain C code returning a Python scalar.
_NUMPY_SCALARS = frozenset(
    {np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.int64,
     np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.str_}
)
_NUMPY_ARRAY_KINDS = frozenset("biufU")


class OutputError(ValueError):
    """The output is not plain JSON within the limits; the message names the offending path."""


def clean_text(text: str) -> str:
    """`text` with every control character and lone surrogate replaced by U+FFFD."""
    return CONTROL_CHARACTERS.sub("\ufffd", text)


def _text_problem(text: str) -> str | None:
    found = CONTROL_CHARACTERS.search(text)
    if found is None:
        return None
    code = ord(found.group())
    kind = "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "the control character"
    return f"{kind} U+{code:04X} at position {found.start()}"


def _path(parts: list[str | int]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "output"
    return text if len(text) <= 80 else text[:77] + "..."


def to_plain_json(value: Any, max_bytes: int) -> str:
    """Convert a template's return value to JSON text, with exact types only (in the child).

    Tuples become lists; exact numpy scalar types and numeric/bool/str numpy arrays are
    converted; anything else is refused with the path of the first bad value.
    """
    budget = [max_bytes]

    def spend(n: int, parts: list[str | int]) -> None:
        budget[0] -= n
        if budget[0] < 0:
            raise OutputError(f"output is larger than {max_bytes} bytes (at {_path(parts)})")

    def convert(v: Any, parts: list[str | int], depth: int) -> Any:
        t = type(v)
        if depth > MAX_DEPTH:
            raise OutputError(f"output is nested deeper than {MAX_DEPTH} levels (at {_path(parts)})")
        if t is str:
            spend(len(v) + 2, parts)
            problem = _text_problem(v)
            if problem is not None:
                raise OutputError(f"{_path(parts)} contains {problem}; text in items must be printable "
                                  "(no control characters or lone surrogates)")
            return v
        if t is int:
            if not MIN_INT <= v <= MAX_INT:
                raise OutputError(f"{_path(parts)} is an integer outside the signed 64-bit range; "
                                  "use a float or a string")
            spend(8, parts)
            return v
        if t is bool or v is None:
            spend(8, parts)
            return v
        if t is float:
            if not math.isfinite(v):
                raise OutputError(f"{_path(parts)} is {v!r}; JSON output must be finite numbers")
            spend(24, parts)
            return v
        if t in _NUMPY_SCALARS:
            return convert(v.item() if t is not np.str_ else str(v), parts, depth)
        if t is dict:
            spend(2, parts)
            out: dict[str, Any] = {}
            for key, item in dict.items(v):
                if type(key) is not str:
                    raise OutputError(f"{_path(parts)} has a key of type {type(key).__name__}; keys must be str")
                problem = _text_problem(key)
                if problem is not None:
                    raise OutputError(f"{_path(parts)} has a key that contains {problem}")
                spend(len(key) + 4, parts)
                out[key] = convert(item, [*parts, key], depth + 1)
            return out
        if t is list or t is tuple:
            spend(2, parts)
            return [convert(item, [*parts, i], depth + 1) for i, item in enumerate(list.__iter__(v) if t is list
                                                                                   else tuple.__iter__(v))]
        if t is np.ndarray and v.dtype.kind in _NUMPY_ARRAY_KINDS:
            spend(int(v.size) * 8, parts)
            return convert(v.tolist(), parts, depth)
        hint = " (call .tolist() or float() first)" if t.__module__.startswith(("numpy", "pandas")) else ""
        raise OutputError(f"{_path(parts)} has type {t.__name__}; output must be plain JSON "
                          f"(dict, list, str, int, float, bool, None){hint}")

    plain = convert(value, [], 0)
    text = json.dumps(plain, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > max_bytes:
        raise OutputError(f"output is larger than {max_bytes} bytes")
    return text


def _reject_constant(name: str) -> Any:
    raise OutputError(f"JSON output contains {name}")


def parse_plain_json(raw: bytes, max_bytes: int) -> Any:
    """Parse untrusted JSON bytes (on the host) and check exact types, depth, finiteness,
    integer range and text (no control characters or lone surrogates)."""
    if len(raw) > max_bytes:
        raise OutputError(f"output is larger than {max_bytes} bytes")
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except OutputError:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # CPython's cap on int digits
            raise OutputError("output contains an integer outside the signed 64-bit range") from None
        raise OutputError(f"output is not valid JSON: {type(exc).__name__}") from None
    except RecursionError:
        raise OutputError("output is not valid JSON: RecursionError") from None
    check_plain(value)
    return value


def _check_scalar_list(values: list[Any], kinds: set[type]) -> bool:
    """Check a list of plain scalars in bulk (series values, option texts); False when it
    holds anything else and must be walked."""
    if not kinds <= _BULK_SCALARS:
        return False
    if float in kinds and not all(map(math.isfinite, values if len(kinds) == 1 else
                                      (v for v in values if type(v) is float))):
        raise OutputError("output contains a non-finite number")
    if int in kinds:
        ints = values if len(kinds) == 1 else [v for v in values if type(v) is int]
        if min(ints) < MIN_INT or max(ints) > MAX_INT:
            raise OutputError("output contains an integer outside the signed 64-bit range")
    if str in kinds:
        for text in values:
            if type(text) is str and CONTROL_CHARACTERS.search(text) is not None:
                raise OutputError(f"output text contains {_text_problem(text)}")
    return True


_BULK_SCALARS = {float, int, str, bool, type(None)}


def check_plain(value: Any) -> None:
    """Iteratively check that `value` holds only exact plain-JSON types (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        t = type(v)
        if depth > MAX_DEPTH + 4:
            raise OutputError("output is nested too deeply")
        if t is str:
            if CONTROL_CHARACTERS.search(v) is not None:
                raise OutputError(f"output text contains {_text_problem(v)}")
            continue
        if t is int:
            if not MIN_INT <= v <= MAX_INT:
                raise OutputError("output contains an integer outside the signed 64-bit range")
            continue
        if t is bool or v is None:
            continue
        if t is float:
            if not math.isfinite(v):
                raise OutputError("output contains a non-finite number")
            continue
        if t is dict:
            for key, item in dict.items(v):
                if type(key) is not str:
                    raise OutputError("output has a non-string key")
                if CONTROL_CHARACTERS.search(key) is not None:
                    raise OutputError(f"output has a key that contains {_text_problem(key)}")
                stack.append((item, depth + 1))
            continue
        if t is list:
            if not _check_scalar_list(v, set(map(type, list.__iter__(v)))):
                stack.extend((item, depth + 1) for item in list.__iter__(v))
            continue
        raise OutputError(f"output contains a {t.__name__}")
