"""Allow-listed stand-ins for the modules a template sees (`np`, `pd`, `math`, ...).

A template never holds a real module: each name it can reach is listed here, and a
`ModuleProxy` is a read-only namespace with nothing else in it. `np.random` is a seeded
legacy generator for the run, never numpy's global one. What a reachable *object* exposes in
turn (a DataFrame's methods, an array's attributes) is governed by `sandbox.policy`.
"""

from __future__ import annotations

import collections
import datetime as _datetime
import difflib
import functools
import itertools
import math as _math
import random as _random
import re as _re
import statistics as _statistics
import string as _string
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.registry import Registry
from itemsmith.sandbox.dispatch import guard_aggfunc


class ModuleProxy:
    """A read-only namespace standing in for a module: only the listed members exist."""

    __slots__ = ("_ModuleProxy__label", "_ModuleProxy__members")

    def __init__(self, label: str, members: Mapping[str, Any]) -> None:
        for name, value in members.items():
            if isinstance(value, types.ModuleType):
                raise TypeError(f"{label}.{name} is a module; proxies never expose modules")
        object.__setattr__(self, "_ModuleProxy__label", label)
        object.__setattr__(self, "_ModuleProxy__members", dict(members))

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__members[name]
        except KeyError:
            raise AttributeError(f"{self.__label}.{name} is not available in templates"
                                 f"{suggestion(name, self.__members)}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{self.__label} is read-only in templates")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{self.__label} is read-only in templates")

    def __dir__(self) -> list[str]:
        return sorted(self.__members)

    def __repr__(self) -> str:
        return f"<{self.__label}>"


def suggestion(name: str, choices: Iterable[str]) -> str:
    """'; did you mean date_range?' for a near miss (DateRange, date_ranges, ...), else ''."""
    lowered = {c.lower().replace("_", ""): c for c in choices}
    key = name.lower().replace("_", "")
    if key in lowered:
        return f"; did you mean {lowered[key]}?"
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""


def proxy_members(proxy: ModuleProxy) -> dict[str, Any]:
    """The members of a proxy (host-side code and tests only)."""
    return dict(object.__getattribute__(proxy, "_ModuleProxy__members"))


def _pick(module: Any, names: Iterable[str]) -> dict[str, Any]:
    return {n: getattr(module, n) for n in names if hasattr(module, n)}


# --- numpy -------------------------------------------------------------------------------

NUMPY_NAMES = (
    # constructors and dtypes
    "array", "asarray", "asanyarray", "ascontiguousarray", "copy", "zeros", "ones", "full", "empty",
    "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "geomspace",
    "eye", "identity", "diag", "diagonal", "diagflat", "tri", "triu", "tril", "meshgrid", "indices",
    "dtype", "generic", "number", "integer", "floating", "complexfloating", "bool_", "bool",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "int_",
    "float16", "float32", "float64", "double", "complex64", "complex128", "str_", "object_",
    "datetime64", "timedelta64", "datetime_as_string", "busday_count", "is_busday", "busday_offset",
    "finfo", "iinfo", "errstate", "result_type", "promote_types", "can_cast", "issubdtype",
    "nan", "inf", "pi", "e", "euler_gamma", "newaxis",
    # elementwise math
    "abs", "absolute", "fabs", "sign", "sqrt", "cbrt", "square", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "power", "float_power", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "hypot", "deg2rad", "rad2deg", "degrees",
    "radians", "floor", "ceil", "trunc", "rint", "round", "around", "fix", "clip", "mod", "fmod",
    "remainder", "divmod", "floor_divide", "add", "subtract", "multiply", "divide", "true_divide",
    "negative", "positive", "reciprocal", "maximum", "minimum", "fmax", "fmin", "heaviside", "sinc",
    "gcd", "lcm", "real", "imag", "angle", "conj", "conjugate", "nan_to_num", "interp",
    "logical_and", "logical_or", "logical_not", "logical_xor", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "isnan", "isfinite", "isinf", "isneginf", "isposinf",
    "isclose", "allclose", "array_equal", "array_equiv", "isscalar", "iscomplexobj", "isrealobj",
    "signbit", "copysign", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    # reductions and statistics
    "sum", "prod", "cumsum", "cumprod", "mean", "average", "median", "std", "var", "min", "max", "amin",
    "amax", "ptp", "argmin", "argmax", "percentile", "quantile", "nansum", "nanprod", "nancumsum",
    "nancumprod", "nanmean", "nanmedian", "nanstd", "nanvar", "nanmin", "nanmax", "nanargmin",
    "nanargmax", "nanpercentile", "nanquantile", "cov", "corrcoef", "correlate", "convolve", "histogram",
    "histogram2d", "histogram_bin_edges", "bincount", "digitize", "count_nonzero", "any", "all",
    "diff", "ediff1d", "gradient", "trapezoid", "cumulative_sum", "cumulative_prod", "dot", "vdot",
    "inner", "outer", "matmul", "cross", "tensordot", "einsum", "kron", "trace",
    # shape and selection
    "shape", "ndim", "size", "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze",
    "expand_dims", "atleast_1d", "atleast_2d", "atleast_3d", "concatenate", "stack", "vstack", "hstack",
    "dstack", "column_stack", "row_stack", "split", "array_split", "hsplit", "vsplit", "append", "insert",
    "delete", "repeat", "tile", "flip", "fliplr", "flipud", "roll", "rot90", "sort", "argsort", "lexsort",
    "partition", "argpartition", "unravel_index", "ravel_multi_index", "searchsorted", "unique",
    "unique_values", "unique_counts", "where", "select", "piecewise", "choose", "nonzero", "flatnonzero",
    "argwhere", "extract", "take", "take_along_axis", "put", "put_along_axis", "place", "compress", "isin",
    "intersect1d", "union1d", "setdiff1d", "setxor1d", "broadcast_to", "broadcast_arrays", "pad", "resize",
    "trim_zeros",
    "polyfit", "polyval", "polyder", "polyint", "roots", "poly", "poly1d", "vectorize",
    "apply_along_axis", "apply_over_axes", "frompyfunc",
)
# frompyfunc is harmless (it wraps a callable) but listed explicitly so removing it is a one-word change.

NUMPY_LINALG_NAMES = (
    "norm", "inv", "pinv", "solve", "lstsq", "det", "slogdet", "eig", "eigh", "eigvals", "eigvalsh",
    "svd", "qr", "cholesky", "matrix_rank", "matrix_power", "cond", "multi_dot", "LinAlgError",
)
NUMPY_FFT_NAMES = (
    "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn",
    "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
)
GENERATOR_METHODS = frozenset({
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma",
    "geometric", "gumbel", "hypergeometric", "integers", "laplace", "logistic", "lognormal", "logseries",
    "multinomial", "multivariate_hypergeometric", "multivariate_normal", "negative_binomial",
    "noncentral_chisquare", "noncentral_f", "normal", "pareto", "permutation", "permuted", "poisson",
    "power", "random", "rayleigh", "shuffle", "spawn", "standard_cauchy", "standard_exponential",
    "standard_gamma", "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald",
    "weibull", "zipf",
})
RANDOMSTATE_METHODS = frozenset({
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma",
    "geometric", "gumbel", "hypergeometric", "laplace", "logistic", "lognormal", "logseries", "multinomial",
    "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f", "normal", "pareto",
    "permutation", "poisson", "power", "rand", "randint", "randn", "random", "random_integers",
    "random_sample", "rayleigh", "seed", "shuffle", "standard_cauchy", "standard_exponential",
    "standard_gamma", "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald",
    "weibull", "zipf",
})
PY_RANDOM_METHODS = frozenset({
    "betavariate", "binomialvariate", "choice", "choices", "expovariate", "gammavariate", "gauss",
    "getrandbits", "lognormvariate", "normalvariate", "paretovariate", "randbytes", "randint", "random",
    "randrange", "sample", "seed", "shuffle", "triangular", "uniform", "vonmisesvariate", "weibullvariate",
})

# --- pandas ------------------------------------------------------------------------------

PANDAS_NAMES = (
    "DataFrame", "Series", "Index", "RangeIndex", "DatetimeIndex", "TimedeltaIndex", "PeriodIndex",
    "IntervalIndex", "MultiIndex", "CategoricalIndex", "Categorical", "CategoricalDtype", "Timestamp",
    "Timedelta", "Period", "Interval", "DateOffset", "Grouper", "NamedAgg", "IndexSlice", "NA", "NaT",
    "date_range", "bdate_range", "period_range", "timedelta_range", "interval_range", "to_datetime",
    "to_timedelta", "to_numeric", "concat", "merge", "merge_asof", "merge_ordered", "cut", "qcut", "isna",
    "isnull", "notna", "notnull", "crosstab", "pivot", "pivot_table", "melt", "wide_to_long",
    "get_dummies", "from_dummies", "unique", "factorize", "infer_freq", "array",
)

MATH_MEMBERS = {n: getattr(_math, n) for n in dir(_math) if not n.startswith("_")}
STATISTICS_NAMES = (
    "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low", "median_high",
    "median_grouped", "mode", "multimode", "quantiles", "pstdev", "pvariance", "stdev", "variance",
    "covariance", "correlation", "linear_regression", "NormalDist", "StatisticsError",
)
DATETIME_NAMES = ("datetime", "date", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR")
ITERTOOLS_NAMES = (
    "accumulate", "batched", "chain", "combinations", "combinations_with_replacement", "compress", "count",
    "cycle", "dropwhile", "filterfalse", "groupby", "islice", "pairwise", "permutations", "product",
    "repeat", "starmap", "takewhile", "tee", "zip_longest",
)
FUNCTOOLS_NAMES = ("reduce", "partial", "lru_cache", "cache", "cmp_to_key", "total_ordering")
COLLECTIONS_NAMES = ("Counter", "defaultdict", "OrderedDict", "deque", "namedtuple")
TYPING_NAMES = (
    "Any", "Callable", "Dict", "Iterable", "Iterator", "List", "Literal", "Mapping", "Optional",
    "Sequence", "Set", "Tuple", "Union",
)
STRING_NAMES = (
    "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits",
    "punctuation", "printable", "whitespace", "capwords",
)
RE_NAMES = (
    "compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split", "escape",
    "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S", "ASCII", "A", "error",
)

class _TypeCheckOnly(type):
    """Metaclass of stand-ins usable with isinstance()/issubclass() but never called."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._target)  # type: ignore[attr-defined]

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls._target)  # type: ignore[attr-defined]

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{cls._label}(...) cannot be called in templates; {cls._hint}")  # type: ignore[attr-defined]


class NdarrayType(metaclass=_TypeCheckOnly):
    """`np.ndarray` for isinstance() checks. Its constructor takes raw buffers, offsets and strides
    (an out-of-bounds read with offset=-8 was measured), so templates cannot call it."""

    _target = np.ndarray
    _label = "np.ndarray"
    _hint = "use np.array(...) or np.zeros(...)"


NUMPY_LINALG = ModuleProxy("np.linalg", _pick(np.linalg, NUMPY_LINALG_NAMES))
NUMPY_FFT = ModuleProxy("np.fft", _pick(np.fft, NUMPY_FFT_NAMES))
NUMPY_STRIDE_TRICKS = ModuleProxy(
    "np.lib.stride_tricks", {"sliding_window_view": np.lib.stride_tricks.sliding_window_view})
NUMPY_LIB = ModuleProxy("np.lib", {"stride_tricks": NUMPY_STRIDE_TRICKS})
_NUMPY_STATIC = {**_pick(np, NUMPY_NAMES), "ndarray": NdarrayType}
PANDAS = ModuleProxy("pd", {**_pick(pd, PANDAS_NAMES),
                            "pivot_table": guard_aggfunc(pd.pivot_table, position=4),
                            "crosstab": guard_aggfunc(pd.crosstab, position=5)})
MATH = ModuleProxy("math", MATH_MEMBERS)
STATISTICS = ModuleProxy("statistics", _pick(_statistics, STATISTICS_NAMES))
DATETIME = ModuleProxy("datetime", _pick(_datetime, DATETIME_NAMES))
ITERTOOLS = ModuleProxy("itertools", _pick(itertools, ITERTOOLS_NAMES))
FUNCTOOLS = ModuleProxy("functools", _pick(functools, FUNCTOOLS_NAMES))
COLLECTIONS = ModuleProxy("collections", _pick(collections, COLLECTIONS_NAMES))
TYPING = ModuleProxy("typing", _pick(typing, TYPING_NAMES))
STRING = ModuleProxy("string", _pick(_string, STRING_NAMES))
RE = ModuleProxy("re", _pick(_re, RE_NAMES))
FUTURE = ModuleProxy("__future__", {"annotations": object()})


class TemplateRandom(_random.Random):
    """The stdlib generator a template gets: `seed()` needs an explicit value (reseeding from
    the clock or os.urandom would make runs unrepeatable)."""

    def seed(self, a: Any = None, version: int = 2) -> None:
        if a is None:
            raise TypeError("random.seed() needs an explicit seed in templates (runs are repeatable)")
        if type(a) not in (int, float, str, bytes, bool):
            raise TypeError("random seeds in templates are int, float, str or bytes")
        super().seed(a, version)


class _RandomFactory(type):
    """`random.Random` for templates: usable with isinstance(); calling it makes a
    `TemplateRandom` with the given seed, or without one a seed derived from the run's."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _random.Random)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, _random.Random)

    def __call__(cls, seed: Any = None) -> TemplateRandom:
        if seed is None:
            seed = cls._next_seed()  # type: ignore[attr-defined]
        return TemplateRandom(seed)


class RunRandomness:
    """The seeded random sources of one run: `rng`, `np.random` (legacy API), `random` and
    `random.Random(...)` instances."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.legacy = np.random.RandomState(seed % 2**32)
        # Library code draws from the process-wide generators where a template names none
        # (`DataFrame.sample()` without random_state): seeded from the run too, so those draws
        # repeat with the seed instead of depending on which child ran the template.
        np.random.seed(seed % 2**32)
        _random.seed(seed)
        self.py_random = TemplateRandom(seed)
        self._spawned = 0
        self._py_spawned = 0
        self.random_class = _RandomFactory("Random", (), {"_next_seed": staticmethod(self._derived_seed),
                                                          "__doc__": _RandomFactory.__doc__})

    def _derived_seed(self) -> int:
        self._py_spawned += 1
        return int(np.random.default_rng([self.seed, 2**32, self._py_spawned]).integers(2**63))

    def legacy_seed(self, seed: Any = None) -> None:
        """`np.random.seed(seed)`; without a seed numpy would reseed from OS entropy."""
        if seed is None:
            raise TypeError("np.random.seed() needs an explicit seed in templates (runs are repeatable)")
        self.legacy.seed(seed)

    def default_rng(self, seed: Any = None) -> np.random.Generator:
        """`np.random.default_rng(seed)`; without a seed, a generator derived from the run seed."""
        if seed is None:
            self._spawned += 1
            return np.random.default_rng([self.seed, self._spawned])
        if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
            raise TypeError("np.random.default_rng() takes an int seed in templates")
        return np.random.default_rng(seed)


def numpy_proxy(randomness: RunRandomness) -> ModuleProxy:
    random_members: dict[str, Any] = {n: getattr(randomness.legacy, n) for n in RANDOMSTATE_METHODS
                                      if hasattr(randomness.legacy, n)}
    random_members["default_rng"] = randomness.default_rng
    random_members["seed"] = randomness.legacy_seed
    members = dict(_NUMPY_STATIC)
    members.update(linalg=NUMPY_LINALG, fft=NUMPY_FFT, lib=NUMPY_LIB,
                   random=ModuleProxy("np.random", random_members))
    return ModuleProxy("np", members)


def random_proxy(randomness: RunRandomness) -> ModuleProxy:
    members: dict[str, Any] = {n: getattr(randomness.py_random, n) for n in PY_RANDOM_METHODS
                               if hasattr(randomness.py_random, n)}
    members["Random"] = randomness.random_class
    return ModuleProxy("random", members)


def synth_proxy() -> ModuleProxy:
    """The public members of `handlers.synthetic` (`__all__`: generators, transforms, registries;
    imported lazily; when it is absent or broken, any use is a clear error)."""
    try:
        import itemsmith.handlers.synthetic as synthetic  # optional, written separately
    except Exception as exc:  # noqa: BLE001 - any import failure makes synth unavailable
        reason = f"{type(exc).__name__}: {exc}"
        return _UnavailableProxy("synth", f"synth is not available in this installation ({reason})")
    names = getattr(synthetic, "__all__", ())
    members = {n: getattr(synthetic, n) for n in names
               if hasattr(synthetic, n) and not isinstance(getattr(synthetic, n), types.ModuleType)}
    # registries reach templates as plain dicts: the copy is theirs, the Registry's methods are not
    members = {n: dict(m) if isinstance(m, Registry) else m for n, m in members.items()}
    return ModuleProxy("synth", members)


class _UnavailableProxy(ModuleProxy):
    __slots__ = ()

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(label, {})
        object.__setattr__(self, "_ModuleProxy__label", reason)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(object.__getattribute__(self, "_ModuleProxy__label"))


def import_table(np_proxy: ModuleProxy, random_module: ModuleProxy) -> dict[str, ModuleProxy]:
    """What `import x` / `from x import y` resolve to inside a template."""
    np_random = np_proxy.random
    return {
        "numpy": np_proxy, "numpy.fft": NUMPY_FFT, "numpy.linalg": NUMPY_LINALG, "numpy.random": np_random,
        "numpy.lib": NUMPY_LIB, "numpy.lib.stride_tricks": NUMPY_STRIDE_TRICKS,
        "pandas": PANDAS, "math": MATH, "random": random_module, "statistics": STATISTICS,
        "datetime": DATETIME, "itertools": ITERTOOLS, "functools": FUNCTOOLS, "collections": COLLECTIONS,
        "typing": TYPING, "string": STRING, "re": RE, "__future__": FUTURE,
    }


ALLOWED_IMPORTS = frozenset({
    "numpy", "numpy.fft", "numpy.linalg", "numpy.random", "numpy.lib", "numpy.lib.stride_tricks", "pandas",
    "math", "random", "statistics", "datetime", "itertools", "functools", "collections", "typing", "string",
    "re", "__future__",
})


def make_importer(table: Mapping[str, ModuleProxy]) -> Callable[..., Any]:
    """The `__import__` of a template's builtins.

    Template `import` statements are checked against ALLOWED_IMPORTS at compile time and
    resolve to proxies here. Any other name can only come from C code running in a template's
    frame (CPython's PyImport_Import uses the current frame's builtins: `datetime.__format__`
    imports `time`); those get the already-loaded real module, which the C caller keeps to
    itself. Nothing new is ever imported. Template code cannot call this function directly:
    `__import__` and `__builtins__` are refused names.
    """

    def guarded_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                       fromlist: Any = (), level: int = 0) -> Any:
        if type(name) is not str or level != 0:
            raise ImportError("relative imports are not allowed in templates")
        if name in table:
            return table[name] if fromlist else table[name.split(".", 1)[0]]
        module = sys.modules.get(name)
        if module is None:
            raise ImportError(f"import of {name!r} is not allowed in templates")
        return module if fromlist else sys.modules[name.split(".", 1)[0]]

    return guarded_import
