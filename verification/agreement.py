"""Krippendorff's alpha at the interval level, for a judge panel's scores."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["krippendorff_alpha_interval"]


def krippendorff_alpha_interval(ratings: ArrayLike) -> float | None:
    """Krippendorff's alpha with the interval metric ``(x - y)^2``.

    ``ratings`` is coders x units; NaN (or None) marks a missing rating. Units with fewer than
    two ratings are not pairable and are dropped. Returns None when alpha is undefined: fewer
    than two pairable units' worth of values, or no variation at all (expected disagreement 0).

    alpha = 1 - D_o / D_e with D_o = (1/n) sum_u (1/(m_u - 1)) sum_{i != j in u} (x_i - x_j)^2
    and D_e = (1/(n (n - 1))) sum_{i != j over all pairable values} (x_i - x_j)^2, n the number
    of pairable values; both pair sums use sum_{i != j} (x_i - x_j)^2 = 2 m sum x^2 - 2 (sum x)^2.
    """
    values = np.array(ratings, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"ratings must be coders x units (2-D), got shape {values.shape}")
    present = ~np.isnan(values)
    m = present.sum(axis=0)
    pairable = m >= 2
    values, present, m = values[:, pairable], present[:, pairable], m[pairable]
    n = int(m.sum())
    if n < 2:
        return None
    x = np.where(present, values, 0.0)
    sums, squares = x.sum(axis=0), (x**2).sum(axis=0)
    observed = np.sum((2 * m * squares - 2 * sums**2) / (m - 1)) / n
    expected = (2 * n * squares.sum() - 2 * sums.sum() ** 2) / (n * (n - 1))
    if expected <= 0:
        return None
    return float(1.0 - observed / expected)
