"""Guards for library calls that turn strings into code: pandas string dispatch, format strings.

pandas resolves a function given by name with `getattr` on the object and then on numpy
(`Series.agg("fromfile")` calls `np.fromfile(series)`; `agg("__getattribute__")` hands out a
dunder), imports modules by name (`apply("plot", backend=NAME)`, `rolling(win_type=...)`,
`engine=`), and formats floats with `str.format` (`to_string(float_format="{0.__class__}")`).

`check_func_spec` is the one canonical check for a "function" handed to pandas: exact `str`
names from a small allow-list, exact `list`/`tuple`/`dict` of specs (walked iteratively, no
depth limit), or a plain callable. Anything else - a numpy array, deque, `pd.Index`, a
list/dict subclass whose `__iter__`/`values()` could lie, an object that is both callable and
list-like - is refused without calling its methods. `check_call_keywords` refuses the keyword
arguments that select engines, plotting backends and window functions by name; the policy
applies it to every library call a template makes.
"""

from __future__ import annotations

import functools
import string
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

# Function names pandas may be given as strings (agg("mean"), transform("cumsum")).
SAFE_FUNCTION_NAMES = frozenset({
    "mean", "sum", "min", "max", "std", "var", "median", "count", "first", "last", "size", "nunique",
    "prod", "sem", "skew", "kurt", "any", "all", "idxmin", "idxmax", "cumsum", "cumprod", "cummin",
    "cummax", "ohlc", "abs", "diff", "pct_change", "rank", "shift", "cumcount", "ngroup", "quantile",
    "ffill", "bfill", "nth", "mode", "describe", "value_counts", "round", "head", "tail",
})
# Methods whose first argument (or func=/arg=) is a function spec, possibly a name.
DISPATCH_METHODS = frozenset({"agg", "aggregate", "apply", "transform", "applymap"})
# Methods that take a mapping or a callable (never a name), and pipe's (callable, keyword) form.
MAPPING_METHODS = frozenset({"map"})
PIPE_METHODS = frozenset({"pipe"})
# Methods of pandas objects that get a guard: dispatchers, plus window types, aggfunc and buffers.
GUARDED_METHODS = DISPATCH_METHODS | MAPPING_METHODS | PIPE_METHODS | {"rolling", "to_string", "pivot_table"}
WINDOW_TYPES = frozenset({
    "boxcar", "triang", "blackman", "hamming", "bartlett", "parzen", "bohman", "blackmanharris",
    "nuttall", "barthann", "kaiser", "gaussian", "general_gaussian", "exponential", "tukey", "taylor",
    "cosine", "hann",
})
SAFE_ENGINES = frozenset({"python", "cython"})
_FORMATTER = string.Formatter()
# Callables a spec may be: functions, builtins, bound methods, ufuncs, partials, vectorized
# functions and classes (float, str, a template's own class). None of them is list- or
# dict-like, so pandas never iterates them for names.
_PLAIN_CALLABLE_TYPES = frozenset({
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodDescriptorType,
    types.MethodWrapperType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
    np.ufunc, functools.partial, np.vectorize, type, type(np.mean),
})


class DispatchRefused(ValueError):
    """A string-dispatch argument the policy does not allow."""


def check_format_string(fmt: str) -> None:
    """Refuse str.format fields that walk attributes or items ('{0.__class__}', '{0[k]}')."""
    if not isinstance(fmt, str):
        raise DispatchRefused("a format string must be a str")
    pending = [fmt]
    while pending:
        for _, field, spec, _ in _FORMATTER.parse(pending.pop()):
            if field is not None and ("." in field or "[" in field):
                raise DispatchRefused(f"format field {{{field}}} is not allowed in templates: "
                                      "attribute and index lookups inside format strings are blocked")
            if spec and "{" in spec:
                pending.append(spec)


def _refuse_spec(spec: Any) -> DispatchRefused:
    allowed = ", ".join(sorted(SAFE_FUNCTION_NAMES))
    if type(spec) is str:
        return DispatchRefused(f"function name {spec!r} is not allowed as a string in templates; "
                               f"pass a function (e.g. a lambda) or one of: {allowed}")
    return DispatchRefused(f"a {type(spec).__name__} is not allowed as a function spec in templates; pass a "
                           f"function, one of the names {allowed}, or a plain list/tuple/dict of those")


def check_func_spec(spec: Any, *, named_aggregation: bool = False) -> None:
    """A function given to pandas: a plain callable, an allow-listed name, or exact lists,
    tuples and dicts of them (dict keys are labels; values are specs). Iterative, no depth
    limit; only exact container types are walked, with the base type's own iteration.

    `named_aggregation`: a (column, spec) pair or `pd.NamedAgg` is accepted at the top level.
    """
    if named_aggregation:
        if type(spec) is tuple and tuple.__len__(spec) == 2:
            spec = tuple.__getitem__(spec, 1)
        elif type(spec) is pd.NamedAgg:  # a plain pandas class: its attributes cannot lie
            spec = spec.aggfunc
    pending = [spec]
    while pending:
        item = pending.pop()
        t = type(item)
        if t is str:
            if item not in SAFE_FUNCTION_NAMES:
                raise _refuse_spec(item)
        elif t is list:
            pending.extend(list.__iter__(item))
        elif t is tuple:
            pending.extend(tuple.__iter__(item))
        elif t is dict:
            pending.extend(dict.values(item))
        elif t in _PLAIN_CALLABLE_TYPES:
            continue
        else:
            raise _refuse_spec(item)


def check_mapping_spec(spec: Any) -> None:
    """`map`'s argument: a plain callable, an exact dict or a pandas Series (lookup tables)."""
    t = type(spec)
    if t is dict or t is pd.Series or t in _PLAIN_CALLABLE_TYPES:
        return
    raise DispatchRefused(f"map() takes a function, a dict or a Series in templates, not a {t.__name__}")


def check_pipe_spec(spec: Any) -> None:
    """`pipe`'s argument: a plain callable, or an exact (callable, keyword name) tuple."""
    t = type(spec)
    if t is tuple and tuple.__len__(spec) == 2 and type(tuple.__getitem__(spec, 1)) is str:
        t = type(tuple.__getitem__(spec, 0))
    if t not in _PLAIN_CALLABLE_TYPES:
        raise DispatchRefused(f"pipe() takes a function in templates, not a {t.__name__}")


def check_call_keywords(kwargs: dict[str, Any]) -> None:
    """Keyword arguments that pick code by name: only the default engines, no plotting
    backend, only real window functions. Exact `str` values only (no lying `__eq__`)."""
    if not kwargs:
        return
    if "engine" in kwargs:
        engine = kwargs["engine"]
        if engine is not None and not (type(engine) is str and engine in SAFE_ENGINES):
            raise DispatchRefused("only the default pandas engine is allowed in templates")
    if "backend" in kwargs:
        raise DispatchRefused("plotting backends are blocked in templates")
    if "win_type" in kwargs:
        check_window_type(kwargs["win_type"])


def check_window_type(win_type: Any) -> None:
    if win_type is not None and not (type(win_type) is str and win_type in WINDOW_TYPES):
        raise DispatchRefused(f"win_type {win_type!r} is not allowed in templates; use one of: "
                              + ", ".join(sorted(WINDOW_TYPES)))


def _first(args: tuple[Any, ...], kwargs: dict[str, Any], offset: int, *names: str) -> tuple[bool, Any]:
    if len(args) > offset:
        return True, args[offset]
    for name in names:
        if name in kwargs:
            return True, kwargs[name]
    return False, None


def check_dispatch_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], offset: int) -> None:
    """The checks for one call of pandas method `name` (args without self when offset is 0)."""
    check_call_keywords(kwargs)
    if name in MAPPING_METHODS:
        given, spec = _first(args, kwargs, offset, "arg", "mapper", "func")
        if given:
            check_mapping_spec(spec)
        return
    if name in PIPE_METHODS:
        given, spec = _first(args, kwargs, offset, "func")
        if given:
            check_pipe_spec(spec)
        return
    given, spec = _first(args, kwargs, offset, "func", "arg")
    if given:
        check_func_spec(spec)
    elif name in ("agg", "aggregate"):
        # named aggregation: every keyword is (column, spec), a NamedAgg, or a spec
        for value in kwargs.values():
            check_func_spec(value, named_aggregation=True)
    for key in ("func", "arg"):
        if key in kwargs and len(args) > offset:
            check_func_spec(kwargs[key])


def guard_method(method: Callable[..., Any], name: str, offset: int) -> Callable[..., Any]:
    """Wrap a bound pandas method (offset 0) or one taken from the class (offset 1: self first)."""
    if name == "rolling":
        def rolling(*args: Any, **kwargs: Any) -> Any:
            check_call_keywords(kwargs)
            if len(args) > offset + 3:
                check_window_type(args[offset + 3])
            return method(*args, **kwargs)
        rolling.__wrapped__ = method  # type: ignore[attr-defined]  # what it calls (sandbox.clock reads it)
        return rolling

    if name == "to_string":
        def to_string(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("buf") is not None or len(args) > offset:
                raise DispatchRefused("to_string() in templates returns a string; it cannot write to a buffer or file")
            float_format = kwargs.get("float_format")
            if float_format is not None and type(float_format) not in _PLAIN_CALLABLE_TYPES:
                check_format_string(float_format)
            return method(*args, **kwargs)
        to_string.__wrapped__ = method  # type: ignore[attr-defined]
        return to_string

    if name == "pivot_table":
        return guard_aggfunc(method, position=offset + 3)

    def dispatcher(*args: Any, **kwargs: Any) -> Any:
        check_dispatch_call(name, args, kwargs, offset)
        return method(*args, **kwargs)
    dispatcher.__name__ = name
    dispatcher.__wrapped__ = method  # type: ignore[attr-defined]
    return dispatcher


def guard_aggfunc(function: Callable[..., Any], position: int) -> Callable[..., Any]:
    """Wrap pd.pivot_table / pd.crosstab / DataFrame.pivot_table: check `aggfunc`."""
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check_call_keywords(kwargs)
        if "aggfunc" in kwargs:
            check_func_spec(kwargs["aggfunc"])
        elif len(args) > position:
            check_func_spec(args[position])
        return function(*args, **kwargs)
    guarded.__name__ = getattr(function, "__name__", "guarded")
    guarded.__doc__ = getattr(function, "__doc__", None)
    guarded.__wrapped__ = function  # type: ignore[attr-defined]
    return guarded
