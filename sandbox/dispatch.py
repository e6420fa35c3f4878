"""Guards for library calls that turn strings into code: pandas string dispatch, format strings.

pandas resolves a function given by name with `getattr` on the object and then on numpy
(`Series.agg("fromfile")` calls `np.fromfile(series)`), imports window functions by name
(`rolling(win_type=...)`), accepts alternative execution engines, and formats floats with
`str.format` (`to_string(float_format="{0.__class__}")`). These wrappers let through only a
small allow-list of names and plain format fields.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

# Function names pandas may be given as strings (agg("mean"), transform("cumsum")).
SAFE_FUNCTION_NAMES = frozenset({
    "mean", "sum", "min", "max", "std", "var", "median", "count", "first", "last", "size", "nunique",
    "prod", "sem", "skew", "kurt", "any", "all", "idxmin", "idxmax", "cumsum", "cumprod", "cummin",
    "cummax", "ohlc", "abs", "diff", "pct_change", "rank",
})
DISPATCH_METHODS = frozenset({"agg", "aggregate", "apply", "transform", "pipe", "map", "applymap"})
# Methods of pandas objects that get a guard: dispatchers, plus window types, aggfunc and buffers.
GUARDED_METHODS = DISPATCH_METHODS | {"rolling", "to_string", "pivot_table"}
WINDOW_TYPES = frozenset({
    "boxcar", "triang", "blackman", "hamming", "bartlett", "parzen", "bohman", "blackmanharris",
    "nuttall", "barthann", "kaiser", "gaussian", "general_gaussian", "exponential", "tukey", "taylor",
    "cosine", "hann",
})
SAFE_ENGINES = (None, "python", "cython")
_FORMATTER = string.Formatter()


def check_format_string(fmt: str) -> None:
    """Refuse str.format fields that walk attributes or items ('{0.__class__}', '{0[k]}')."""
    for _, field, spec, _ in _FORMATTER.parse(fmt):
        if field is not None and ("." in field or "[" in field):
            raise ValueError(f"format field {{{field}}} is not allowed in templates: "
                             "attribute and index lookups inside format strings are blocked")
        if spec and "{" in spec:
            check_format_string(spec)


def check_func_spec(spec: Any, depth: int = 0) -> None:
    """A function given to pandas: a callable, an allow-listed name, or lists/dicts of them."""
    if depth > 4:
        return
    if isinstance(spec, str):
        if spec not in SAFE_FUNCTION_NAMES:
            allowed = ", ".join(sorted(SAFE_FUNCTION_NAMES))
            raise ValueError(f"function name {spec!r} is not allowed as a string in templates; "
                             f"pass a function (e.g. a lambda) or one of: {allowed}")
    elif isinstance(spec, (list, tuple)):
        for item in spec:
            check_func_spec(item, depth + 1)
    elif isinstance(spec, dict):
        for item in spec.values():
            check_func_spec(item, depth + 1)


def _check_engine(kwargs: dict[str, Any]) -> None:
    if kwargs.get("engine") not in SAFE_ENGINES:
        raise ValueError("only the default pandas engine is allowed in templates")


def guard_method(method: Callable[..., Any], name: str, offset: int) -> Callable[..., Any]:
    """Wrap a bound pandas method (offset 0) or one taken from the class (offset 1: self first)."""
    if name == "rolling":
        def rolling(*args: Any, **kwargs: Any) -> Any:
            win_type = kwargs.get("win_type", args[offset + 3] if len(args) > offset + 3 else None)
            if win_type is not None and win_type not in WINDOW_TYPES:
                raise ValueError(f"win_type {win_type!r} is not allowed in templates; use one of: "
                                 + ", ".join(sorted(WINDOW_TYPES)))
            return method(*args, **kwargs)
        return rolling

    if name == "to_string":
        def to_string(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("buf") is not None or len(args) > offset:
                raise ValueError("to_string() in templates returns a string; it cannot write to a buffer or file")
            if isinstance(kwargs.get("float_format"), str):
                check_format_string(kwargs["float_format"])
            return method(*args, **kwargs)
        return to_string

    if name == "pivot_table":
        return guard_aggfunc(method, position=offset + 3)

    def dispatcher(*args: Any, **kwargs: Any) -> Any:
        if len(args) > offset:
            check_func_spec(args[offset])
        for key in ("func", "arg"):
            if key in kwargs:
                check_func_spec(kwargs[key])
        if name in ("agg", "aggregate"):
            for key, value in kwargs.items():
                if key in ("func", "arg", "axis"):
                    continue
                if isinstance(value, tuple) and len(value) == 2:  # named aggregation: (column, func)
                    check_func_spec(value[1])
                elif isinstance(value, (str, list, dict)):
                    check_func_spec(value)
        _check_engine(kwargs)
        return method(*args, **kwargs)
    return dispatcher


def guard_aggfunc(function: Callable[..., Any], position: int) -> Callable[..., Any]:
    """Wrap pd.pivot_table / pd.crosstab / DataFrame.pivot_table: check `aggfunc`."""
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if "aggfunc" in kwargs:
            check_func_spec(kwargs["aggfunc"])
        elif len(args) > position:
            check_func_spec(args[position])
        return function(*args, **kwargs)
    guarded.__name__ = getattr(function, "__name__", "guarded")
    guarded.__doc__ = getattr(function, "__doc__", None)
    return guarded
