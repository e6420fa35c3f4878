"""The clock guard: no "now" or "today" ever reaches numpy or pandas from template code.

numpy and pandas read the wall clock when they parse those words into a time
(`np.datetime64("now")`, `pd.Timestamp("today")`, `Series.astype("datetime64[ns]")`, a datetime
index compared with "now", ...), so an item keyed on them passes every check today and has other
keys tomorrow. The parsers live in C and are reached from hundreds of entry points (every array
constructor and cast with a datetime dtype, comparisons, setitem), so the guard does not list
entry points: it checks each *value* where it crosses from template code into numpy/pandas, in
the form the library receives it:

- the arguments of every call that reaches numpy/pandas (a numpy/pandas callable, a method of a
  numpy/pandas object, or any call handed a numpy/pandas callable: `map(np.datetime64, ...)`,
  `functools.partial(pd.Timestamp)`), and the object whose method is called (`check_call`);
  a lazy iterator among them (a generator, `map`, `zip`, ...) is wrapped so that each element
  is checked as the library draws it; one nested inside a container cannot be seen and is refused;
- what template code hands back to library code while such a call runs: what its functions and
  lambdas return or yield (callbacks, `__str__`, `__iter__`, `__getitem__`, ...: `returned`);
- the values of builtins that order them (`max(index, "now")`, `sorted`, `list.sort`,
  `statistics`): a datetime index compares itself with the string (`check_call`, ORDERING);
- items and attributes stored into numpy/pandas objects (`check_stored`) and subscript keys
  (`check_key`);
- comparisons with datetime-like numpy/pandas values (`compare`).

A value names the clock when it is, or holds at any depth, a string (any str or bytes type:
`np.str_`, `np.bytes_`, ...; U/S/object arrays of any shape, 0-d included; structured fields;
pandas string, object and categorical data) whose text up to its first NUL - what the C parsers
read - is "now" or "today" in any case, surrounding whitespace ignored (a margin: neither parser
accepts it). Truncation, NUL padding and case tricks therefore end in the same check: the value
is checked after them, as the library gets it.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import operator
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd

CLOCK_WORDS = frozenset({"now", "today"})
_WORD_LENGTHS = frozenset(map(len, CLOCK_WORDS))
_SCALARS = frozenset({int, float, bool, complex, type(None), slice, range, type(Ellipsis), np.float64, np.float32,
                      np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8, np.bool_,
                      np.datetime64, np.timedelta64, pd.Timestamp, pd.Timedelta, pd.Period, type(pd.NaT),
                      type(pd.NA)})
_SEQUENCES: dict[type, Callable[[Any], Any]] = {
    list: list.__iter__, tuple: tuple.__iter__, set: set.__iter__, frozenset: frozenset.__iter__,
    collections.deque: collections.deque.__iter__, type({}.keys()): type({}.keys()).__iter__,
    type({}.values()): type({}.values()).__iter__, type({}.items()): type({}.items()).__iter__,
}
_SEQUENCE_BASES = tuple(_SEQUENCES)
_PLAIN = frozenset({int, float, str, bool, type(None)})  # Python values: nothing parses them
CLOCK = "clock"
LAZY = "lazy"


class ClockRefused(TypeError):
    """A clock word (or an iterator the guard cannot see into) on its way to numpy/pandas."""


def _refusal(finding: str) -> ClockRefused:
    if finding == LAZY:
        return ClockRefused("templates cannot pass an iterator inside a container to numpy or pandas (its values "
                            "cannot be checked before the library reads them); pass list(...) instead")
    return ClockRefused("templates cannot pass 'now' or 'today' to numpy or pandas: they read the clock, so items "
                        "would change from day to day; take dates from the data")


def clock_text(text: str) -> bool:
    """Whether numpy/pandas could read `text` as the clock: the text up to its first NUL (what
    the C parsers see), surrounding whitespace ignored, is a clock word in any case."""
    head = text.partition("\x00")[0].strip()
    return len(head) in _WORD_LENGTHS and head.casefold() in CLOCK_WORDS


def _string_array_names_clock(array: np.ndarray) -> bool:
    """U/S arrays: a vectorized pre-filter, then the exact rule on the few candidates."""
    flat = array.ravel()
    if flat.size == 0:
        return False
    kind = array.dtype.kind
    lowered = np.strings.lower(flat)
    words = [w if kind == "U" else w.encode() for w in CLOCK_WORDS]
    candidates = np.zeros(flat.shape, dtype=bool)
    for word in words:
        candidates |= np.strings.find(lowered, word) >= 0
    for text in flat[candidates].tolist():
        if clock_text(text if kind == "U" else text.decode("latin-1")):
            return True
    return False


def _object_elements(array: np.ndarray) -> Any:
    flat = array.ravel()
    try:  # labels repeat: the distinct values are usually few
        return pd.unique(flat).tolist()
    except TypeError:  # unhashable elements
        return flat.tolist()


def _library_object(value: Any) -> bool:
    return type(value).__module__.partition(".")[0] in ("numpy", "pandas")


def find(value: Any) -> str | None:
    """CLOCK when `value` is or holds a clock word at any depth, LAZY when it holds an iterator
    whose elements cannot be seen yet, else None. Walks exact containers with their base type's
    own iteration (a subclass's `__iter__` is never called), arrays, pandas objects (values,
    index, columns, categories); other objects are single values."""
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        t = type(item)
        if t in _SCALARS:
            continue
        if isinstance(item, str):
            if clock_text(item):
                return CLOCK
            continue
        if isinstance(item, (bytes, bytearray)):
            if clock_text(bytes(item).decode("latin-1")):
                return CLOCK
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            kind = item.dtype.kind
            if kind in "US":
                if _string_array_names_clock(item):
                    return CLOCK
            elif kind == "O":
                pending.extend(_object_elements(item))
            elif item.dtype.names:
                pending.extend(item[name] for name in item.dtype.names)
        elif t is np.void:
            pending.extend(item.tolist() if item.dtype.names else ())
        elif isinstance(item, dict):
            pending.extend(dict.keys(item))
            pending.extend(dict.values(item))
        elif isinstance(item, _SEQUENCE_BASES):
            base = next(b for b in t.__mro__ if b in _SEQUENCES)
            elements = list(_SEQUENCES[base](item))
            if not set(map(type, elements)) <= _SCALARS:  # numbers only: nothing to look at
                pending.extend(elements)
        elif isinstance(item, pd.DataFrame):
            pending.append(item.index)
            pending.append(item.columns)
            for position, dtype in enumerate(item.dtypes.tolist()):
                if isinstance(dtype, pd.CategoricalDtype) or dtype.kind in "OSU":
                    pending.append(item.iloc[:, position].array)
        elif isinstance(item, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
            if isinstance(item, pd.Series):
                pending.append(item.index)
            dtype = item.dtype
            if isinstance(dtype, pd.CategoricalDtype):
                pending.append(dtype.categories)
            elif dtype.kind in "OSU":
                pending.append(np.asarray(item, dtype=object))
            if isinstance(item, pd.MultiIndex):
                pending.extend(item.levels)
        elif t is np.flatiter:
            pending.append(item.base)
        elif isinstance(item, Iterator) and not _library_object(item):
            return LAZY
    return None


def check(value: Any) -> Any:
    finding = find(value)
    if finding is not None:
        raise _refusal(finding)
    return value


def _checked_elements(iterator: Iterator[Any]) -> Iterator[Any]:
    for element in iterator:
        yield check(element)


def _guarded(value: Any) -> Any:
    """`value` checked, or a lazy iterator wrapped so that every element is checked when drawn."""
    if isinstance(value, Iterator) and not _library_object(value):
        return _checked_elements(value)
    return check(value)


# --- where values cross into numpy/pandas ---------------------------------------------------------

_depth = [0]  # numpy/pandas calls in progress in this (single-threaded) run

_CALLABLE_TYPES = (types.BuiltinFunctionType, types.FunctionType, types.MethodType, types.MethodWrapperType,
                   types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType, np.ufunc)


def _is_library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) if isinstance(obj, (type, *_CALLABLE_TYPES)) else None
    if type(module) is not str:
        module = type(obj).__module__
    return module.partition(".")[0] in ("numpy", "pandas")


def _unwrapped(value: Any) -> Any:
    """What a partial, or one of the sandbox's own guard wrappers (`dispatch.guard_method`, which
    set `__wrapped__`; a template's functions cannot), finally calls."""
    while True:
        if type(value) is functools.partial:
            value = value.func
        elif type(value) is types.FunctionType and "__wrapped__" in value.__dict__:
            value = value.__dict__["__wrapped__"]
        else:
            return value


# Builtins that order the values they are given: `max(index, "now")` and `sorted([index, "now"])`
# make a datetime index compare itself with the string (one bit of the clock per comparison).
_ORDERING = frozenset({id(sorted), id(min), id(max), id(list.sort)})


def _orders_values(value: Any) -> bool:
    if id(value) in _ORDERING:
        return True
    if type(value) is types.BuiltinMethodType:  # [index, "now"].sort
        return value.__name__ == "sort" and isinstance(value.__self__, list)
    return type(value) is types.FunctionType and value.__module__ == "statistics"  # median, quantiles, ...


LIBRARY = "library"
ORDERING = "ordering"


def reaches_library(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """LIBRARY when a call hands values to numpy/pandas: it calls one of their callables or a
    method of one of their objects, or it is handed one of their callables to call (`map`,
    `sorted(key=)`, `functools.partial`, `itertools.accumulate(..., max)`, ...); ORDERING when
    it calls a builtin that orders its values, which may be datetime indexes (`max(index, "now")`,
    `sorted([index, "now"])`: one bit of the clock per comparison); else None."""
    target = _unwrapped(target)
    if _is_library(target):
        return LIBRARY
    owner = getattr(target, "__self__", None)
    if owner is not None and type(owner) is not types.ModuleType and _is_library(owner):
        return LIBRARY
    handed = [_unwrapped(v) for v in (*args, *kwargs.values()) if type(v) not in _PLAIN and callable(v)]
    if any(_is_library(v) or _orders_values(v) for v in handed):  # strict: it calls them with values we cannot see
        return LIBRARY
    return ORDERING if _orders_values(target) else None


def check_call(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], reach: str = LIBRARY
               ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments to pass, after checking them and the object whose method `target` is;
    raises ClockRefused. LIBRARY: lazy iterators are wrapped (checked as drawn). ORDERING: they
    are drawn first (sorted, min, max and statistics draw them all anyway), and a clock word is
    refused only where a datetime-like value is among the values (`max("now", "later")` is text)."""
    owner = getattr(_unwrapped(target), "__self__", None)
    if type(owner) is types.ModuleType:
        owner = None
    if reach == LIBRARY:
        if owner is not None:
            check(owner)
        return tuple(map(_guarded, args)), {name: _guarded(value) for name, value in kwargs.items()}
    args = tuple(list(a) if isinstance(a, Iterator) and not _library_object(a) else a for a in args)
    values = (owner, args, kwargs)
    finding = find(values)
    if finding == LAZY or (finding == CLOCK and _holds_datetime(values)):
        raise _refusal(finding)
    return args, kwargs


def _holds_datetime(value: Any) -> bool:
    """Whether a datetime-like numpy/pandas value sits in `value` at any depth of plain containers."""
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if type(item) in _PLAIN or id(item) in seen:
            continue
        seen.add(id(item))
        if _datetime_like(item):
            return True
        if isinstance(item, dict):
            pending.extend(dict.keys(item))
            pending.extend(dict.values(item))
        elif isinstance(item, _SEQUENCE_BASES):
            base = next(b for b in type(item).__mro__ if b in _SEQUENCES)
            pending.extend(_SEQUENCES[base](item))
        elif isinstance(item, np.ndarray) and item.dtype.kind == "O":
            pending.extend(item.ravel().tolist())
    return False


@contextlib.contextmanager
def library_call() -> Iterator[None]:
    """While numpy/pandas run, what template code returns to them is checked (`returned`)."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1


def returned(value: Any) -> Any:
    """`_returned_`: every `return` (and lambda result) of template code. Outside numpy/pandas
    calls it is the value itself; inside one it may be going to the library (a callback's
    result, `__str__`, `__iter__`, `__getitem__`), so it is checked (iterators wrapped)."""
    if not _depth[0] or type(value) in _SCALARS:
        return value
    return _guarded(value)


def check_stored(key: Any, value: Any) -> None:
    """`obj[key] = value` and `obj.attr = value` on numpy/pandas objects."""
    check(key)
    check(value)


def check_key(obj: Any, key: Any) -> None:
    """`obj[key]` on a numpy/pandas object (a datetime index parses string keys)."""
    if type(key) not in _SCALARS and _library_object(obj):
        check(key)


def _datetime_like(value: Any) -> bool:
    t = type(value)
    if t in (int, float, str, bool, type(None)):
        return False
    if isinstance(value, (np.datetime64, np.timedelta64, pd.Timestamp, pd.Timedelta, pd.Period)):
        return True
    if isinstance(value, pd.DataFrame):
        return any(_datetime_dtype(d) for d in value.dtypes.tolist()) or _datetime_dtype(value.index.dtype)
    dtype = getattr(value, "dtype", None) if _library_object(value) else None
    return dtype is not None and _datetime_dtype(dtype)


def _datetime_dtype(dtype: Any) -> bool:
    return isinstance(dtype, (pd.DatetimeTZDtype, pd.PeriodDtype)) or getattr(dtype, "kind", "") in ("M", "m")


COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b, "is": operator.is_, "is not": operator.is_not,
}


def compare(left: Any, op: str, right: Any) -> Any:
    """`left op right` in a template: a datetime-like numpy/pandas value parses a string it is
    compared with (`index > "now"`), so the other side is checked first."""
    function = COMPARISONS[op]
    lt, rt = type(left), type(right)
    if (lt in _SCALARS and rt in _SCALARS) or (lt in _PLAIN and rt in _PLAIN):  # no text, or nothing parses
        return function(left, right)
    if not (_datetime_like(left) or _datetime_like(right)):
        return function(left, right)
    check(left)
    check(right)
    _depth[0] += 1
    try:
        return function(left, right)
    finally:
        _depth[0] -= 1


def compare_chain(left: Any, ops: tuple[str, ...], eager: tuple[bool, ...], *later: Any) -> Any:
    """`a < b < c`: each comparison through `compare`, each operand evaluated once and only when
    needed (Python's own short-circuit): names and constants come as values (`eager`), other
    operands as thunks."""
    result: Any = True
    for op, now, operand in zip(ops, eager, later, strict=True):
        right = operand if now else operand()
        result = compare(left, op, right)
        if not result:
            return result
        left = right
    return result
