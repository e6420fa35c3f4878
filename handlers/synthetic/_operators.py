"""TimeSeriesExam composition operators: add, multiply, concatenate `Synthetic` series.

The result's labels are family "composite", kind "add" / "multiply" / "concatenate", and
`components`: the labels of each part, in order.
"""

from __future__ import annotations

import numpy as np

from itemsmith.handlers.synthetic._core import Synthetic


def _composite(values: np.ndarray, kind: str, parts: tuple[Synthetic, ...], **extra: object) -> Synthetic:
    return Synthetic(values, {"family": "composite", "kind": kind,
                              "components": [p.labels for p in parts], **extra})


def _same_shape(parts: tuple[Synthetic, ...], what: str) -> None:
    if len(parts) < 2:
        raise ValueError(f"{what} needs at least 2 parts")
    shapes = {p.values.shape for p in parts}
    if len(shapes) > 1:
        raise ValueError(f"{what} needs parts of the same shape, got {sorted(shapes)}")


def add(*parts: Synthetic) -> Synthetic:
    """Sum of same-shape parts, e.g. `add(linear(rng), sine(rng), white_noise(rng))`
    for trend + seasonality + noise. Labels: components."""
    _same_shape(parts, "add")
    return _composite(np.sum([p.values for p in parts], axis=0), "add", parts)


def multiply(a: Synthetic, b: Synthetic) -> Synthetic:
    """Element-wise product of two same-shape parts, e.g. `multiply(linear(rng), sine(rng))`
    for a seasonality whose amplitude grows with the trend. Labels: components."""
    _same_shape((a, b), "multiply")
    return _composite(a.values * b.values, "multiply", (a, b))


def concatenate(*parts: Synthetic) -> Synthetic:
    """Parts one after the other in time (a regime change at each junction); parts may differ
    in length but not in number of channels. Labels: components, boundaries (the index where
    each part after the first starts)."""
    if len(parts) < 2:
        raise ValueError("concatenate needs at least 2 parts")
    if len({p.values.shape[1:] for p in parts}) > 1:
        raise ValueError("concatenate needs parts with the same number of channels")
    boundaries = np.cumsum([p.length for p in parts])[:-1]
    return _composite(np.concatenate([p.values for p in parts]), "concatenate", parts,
                      boundaries=boundaries)
