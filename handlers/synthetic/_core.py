"""The `Synthetic` result type, the generator registry and the helpers every generator shares."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy.signal import lfilter

from itemsmith.registry import Registry

T = TypeVar("T")
SeedLike = np.random.Generator | int

GENERATORS: Registry[Callable[..., Synthetic]] = Registry("synthetic generator")
"""Every generator by name (the function's own name)."""

KINDS: dict[str, tuple[str, ...]] = {}
"""The sub-kinds each feature generator accepts (its `kind=` argument; `direction=` for granger_pair)."""

MIN_LENGTH: dict[str, int] = {}
"""The shortest `length` each generator accepts (below it the property is not reliably visible)."""


@dataclass(frozen=True, eq=False)
class Synthetic:
    """A generated series and the ground truth it was built with.

    - `values`: read-only float array, shape (n,) for one channel, or (n, 2) for a pair whose
      columns are x (column 0) and y (column 1).
    - `labels`: a plain JSON-able dict. Always `family` and `kind`; then the generating
      parameters (slopes, periods, indices, ...). Indices are 0-based positions in `values`;
      an index range is `start` (first affected sample) to `end` (exclusive).
    """

    values: np.ndarray
    labels: dict[str, Any]

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=float)
        if values.ndim not in (1, 2) or values.shape[0] == 0:
            raise ValueError(f"values must be a non-empty 1-D or 2-D array, got shape {values.shape}")
        values.flags.writeable = False
        labels = _plain(dict(self.labels))
        missing = {"family", "kind"} - set(labels)
        if missing:
            raise ValueError(f"labels lack {sorted(missing)}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "labels", labels)

    @property
    def length(self) -> int:
        """Number of time steps (rows of `values`)."""
        return int(self.values.shape[0])


def _plain(value: Any) -> Any:
    """`value` with numpy scalars and tuples turned into JSON-able Python values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            raise ValueError(f"label value {value!r} is not finite")
        return float(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"label value {value!r} of type {type(value).__name__} is not JSON-able")


def as_rng(rng: SeedLike) -> np.random.Generator:
    """`rng` itself if it is a numpy Generator, else a new Generator seeded with the int `rng`."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng must be a numpy.random.Generator or an int seed, got {type(rng).__name__}")


Check = Callable[[np.ndarray, dict[str, Any]], bool]

MAX_DRAWS = 200
"""Realizations a checked generator draws (from the same rng) before raising UnrealizedLabelError."""


class UnrealizedLabelError(RuntimeError):
    """No realization out of MAX_DRAWS showed the generator's label: its (given) parameters
    make the property too weak to see at this length."""


CHECKS: dict[str, Check] = {}
"""The realization check of each generator that has one (see `_realization`)."""

UNCHECKED: dict[str, Callable[..., Synthetic]] = {}
"""Every generator with its realization check switched off: the first draw, shown or not
(for measuring what the check buys; templates get GENERATORS)."""


def register(*, min_length: int = 2, kinds: tuple[str, ...] = (), kind_param: str = "kind",
             check: Check | None = None) -> Callable[[Callable[..., Synthetic]], Callable[..., Synthetic]]:
    """Register a generator and give it the shared argument handling.

    The wrapped generator accepts an int seed for `rng`, rejects a `length` below
    `min_length`, rejects an unknown kind, and draws the kind from `rng` when it is None.
    With a `check(values, labels)`, it redraws the realization (everything not given,
    kind excepted, from the same `rng`) until the check passes, at most MAX_DRAWS times,
    then raises UnrealizedLabelError.
    """
    def decorate(fn: Callable[..., Synthetic]) -> Callable[..., Synthetic]:
        signature = inspect.signature(fn)

        def prepare(rng: SeedLike, args: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments:
            bound = signature.bind(as_rng(rng), *args, **kwargs)
            bound.apply_defaults()
            generator, length = bound.arguments["rng"], bound.arguments["length"]
            if not isinstance(length, int | np.integer) or length < min_length:
                raise ValueError(f"{fn.__name__} needs an int length >= {min_length}, got {length!r}")
            bound.arguments["length"] = int(length)
            if kinds:
                kind = bound.arguments[kind_param]
                if kind is None:
                    bound.arguments[kind_param] = kinds[int(generator.integers(len(kinds)))]
                elif kind not in kinds:
                    raise ValueError(f"{fn.__name__}: {kind_param} must be one of {list(kinds)}, got {kind!r}")
            return bound

        @functools.wraps(fn)
        def unchecked(rng: SeedLike, *args: Any, **kwargs: Any) -> Synthetic:
            bound = prepare(rng, args, kwargs)
            return fn(*bound.args, **bound.kwargs)

        @functools.wraps(fn)
        def checked(rng: SeedLike, *args: Any, **kwargs: Any) -> Synthetic:
            assert check is not None  # registered only with a check
            return _redraw(fn, check, prepare(rng, args, kwargs))

        GENERATORS.add(fn.__name__, unchecked if check is None else checked)
        UNCHECKED[fn.__name__] = unchecked
        MIN_LENGTH[fn.__name__] = min_length
        if kinds:
            KINDS[fn.__name__] = kinds
        if check is not None:
            CHECKS[fn.__name__] = check
        return GENERATORS[fn.__name__]

    return decorate


def _redraw(fn: Callable[..., Synthetic], check: Check, bound: inspect.BoundArguments) -> Synthetic:
    """fn's first realization (from the same rng, draw after draw) that passes `check`."""
    for _ in range(MAX_DRAWS):
        made = fn(*bound.args, **bound.kwargs)
        if check(made.values, made.labels):
            return made
    given_args = {k: v for k, v in bound.arguments.items() if k != "rng"}
    raise UnrealizedLabelError(
        f"{fn.__name__}({', '.join(f'{k}={v!r}' for k, v in given_args.items())}): none of "
        f"{MAX_DRAWS} realizations shows its label clearly (the realization check "
        f"{check.__module__.rsplit('.', 1)[-1]}.{check.__name__} failed each time); "
        "the given parameters make the property too weak to see at this length")


def given(value: T | None, draw: Callable[[], T]) -> T:
    """`value` if it was given, else a fresh draw (a given value consumes no randomness)."""
    return draw() if value is None else value


def uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """One float drawn uniformly from [low, high)."""
    return float(rng.uniform(low, high))


def sign(rng: np.random.Generator) -> int:
    """+1 or -1 with equal probability."""
    return 1 if rng.random() < 0.5 else -1


def ar1(rng: np.random.Generator, length: int, phi: float) -> np.ndarray:
    """A stationary AR(1) path with unit-variance innovations, its first value drawn from the
    stationary distribution (so no burn-in is needed)."""
    e = rng.standard_normal(length)
    e[0] /= np.sqrt(1.0 - phi**2)
    return lfilter([1.0], [1.0, -phi], e)
