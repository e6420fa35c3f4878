"""Bivariate feature families of Fons et al. (Table 1, Appendix B.2) and Granger causality.

Every generator returns values of shape (n, 2): column 0 is x, column 1 is y. Each channel
gets its own level (20..100) and scale (0.5..2), which do not change any correlation.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from itemsmith.handlers.synthetic import _realization as checks
from itemsmith.handlers.synthetic._core import Synthetic, ar1, given, register, sign, uniform

_BURN_IN = 100


def _pair(rng: np.random.Generator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Stack standardized x and y as columns, each moved to its own level and scale."""
    levels = rng.uniform(20.0, 100.0, 2)
    scales = rng.uniform(0.5, 2.0, 2)
    return np.column_stack([x, y]) * scales + levels


def _mix(rho: float | np.ndarray, common: np.ndarray, own: np.ndarray) -> np.ndarray:
    """A unit-variance series with correlation `rho` (per step if an array) to the unit-variance `common`."""
    return rho * common + np.sqrt(1.0 - rho**2) * own


def _strength(rng: np.random.Generator, kind: str) -> float:
    """A correlation for "positive" (0.75..0.95), "negative" (-0.95..-0.75) or "none" (0)."""
    size = uniform(rng, 0.75, 0.95)
    return {"positive": size, "negative": -size, "none": 0.0}[kind]


@register(min_length=40, kinds=("positive", "negative", "none"), check=checks.correlated_pair)
def correlated_pair(rng: np.random.Generator, length: int = 120, *, kind: str | None = None,
                    rho: float | None = None) -> Synthetic:
    """Two series with contemporaneous correlation `rho` (independent Gaussian draws over time).

    kind: "positive" (rho 0.75..0.95), "negative" (-0.95..-0.75) or "none" (rho 0).
    Labels: rho, correlated.
    """
    rho = float(given(rho, lambda: _strength(rng, kind)))
    x, own = rng.standard_normal((2, length))
    return Synthetic(_pair(rng, x, _mix(rho, x, own)),
                     {"family": "correlation", "kind": kind, "rho": rho, "correlated": rho != 0.0})


@register(min_length=60, kinds=("positive", "negative"), check=checks.lagged_pair)
def lagged_pair(rng: np.random.Generator, length: int = 150, *, kind: str | None = None,
                lag: int | None = None, rho: float | None = None) -> Synthetic:
    """y follows x with a delay: y[t] = rho * x[t - lag] + noise (after standardizing), so the
    cross-correlation corr(x[t - k], y[t]) peaks at k = lag.

    x is an AR(1) with phi 0.3..0.6 (smooth enough to see the shifted copy).
    kind: "positive" (rho 0.75..0.95) or "negative" (-0.95..-0.75).
    lag: steps by which y lags x; default 2 .. min(10, length // 10); 0 gives a direct
    (same-time) relation.
    Labels: lag, rho, leader ("x"), phi.
    """
    rho = float(given(rho, lambda: _strength(rng, kind)))
    lag = int(given(lag, lambda: int(rng.integers(2, max(2, min(10, length // 10)) + 1))))
    phi = uniform(rng, 0.3, 0.6)
    source = ar1(rng, length + lag, phi) * np.sqrt(1.0 - phi**2)
    x, y = source[lag:], _mix(rho, source[:length], rng.standard_normal(length))
    return Synthetic(_pair(rng, x, y), {"family": "cross_correlation", "kind": kind, "lag": lag, "rho": rho,
                                        "leader": "x", "phi": phi})


_REGIMES = {"positive_to_negative": ("positive", "negative"), "negative_to_positive": ("negative", "positive"),
            "correlated_to_uncorrelated": ("correlated", "none"), "uncorrelated_to_correlated": ("none", "correlated")}


@register(min_length=150, kinds=tuple(_REGIMES), check=checks.dcc_pair)
def dcc_pair(rng: np.random.Generator, length: int = 200, *, kind: str | None = None,
             change_index: int | None = None) -> Synthetic:
    """Dynamic conditional correlation: the correlation of x and y switches once, at
    `change_index` (default 30..70% of the length).

    kind: "positive_to_negative", "negative_to_positive", "correlated_to_uncorrelated"
    (correlated first half) or "uncorrelated_to_correlated" (correlated second half);
    correlated regimes have |rho| 0.85..0.97 (sign random where the kind does not fix it).
    Labels: change_index (first sample of the second regime), rho_before, rho_after.
    """
    change = int(given(change_index, lambda: int(rng.integers(int(0.3 * length), int(0.7 * length) + 1))))
    signs = {"positive": 1, "negative": -1, "none": 0, "correlated": sign(rng)}
    before, after = (signs[regime] * uniform(rng, 0.85, 0.97) for regime in _REGIMES[kind])
    x, own = rng.standard_normal((2, length))
    rho = np.where(np.arange(length) < change, before, after)
    return Synthetic(_pair(rng, x, _mix(rho, x, own)),
                     {"family": "dynamic_correlation", "kind": kind, "change_index": change,
                      "rho_before": before, "rho_after": after})


@register(min_length=100, kinds=("x->y", "y->x", "none"), kind_param="direction", check=checks.granger_pair)
def granger_pair(rng: np.random.Generator, length: int = 200, *, direction: str | None = None,
                 lag: int | None = None, coefficient: float | None = None) -> Synthetic:
    """A pair where one series Granger-causes the other: the cause is an AR(1) (phi 0.2..0.5) and
    effect[t] = phi_e * effect[t-1] + coefficient * cause[t - lag] + e[t] (phi_e 0.2..0.5, unit
    noise), so past values of the cause help predict the effect but not the other way round.

    direction: "x->y" (x causes y), "y->x", or "none" (two independent AR(1) series).
    lag: 1..5 by default (at least 1). coefficient: +-0.8..1.2 by default (0 for "none").
    Both series are standardized before the levels and scales are applied.
    Labels: direction (= kind), cause ("x", "y" or "none"), effect, lag (for "none": the lag a
    test would use), coefficient.
    """
    lag = int(given(lag, lambda: int(rng.integers(1, 6))))
    if lag < 1:
        raise ValueError(f"granger_pair needs lag >= 1, got {lag}")
    coefficient = 0.0 if direction == "none" else float(given(coefficient, lambda: sign(rng) * uniform(rng, 0.8, 1.2)))
    phi_cause, phi_effect = uniform(rng, 0.2, 0.5), uniform(rng, 0.2, 0.5)
    cause = ar1(rng, length + _BURN_IN, phi_cause)
    drive = coefficient * np.concatenate([np.zeros(lag), cause[:-lag]])
    effect = lfilter([1.0], [1.0, -phi_effect], drive + rng.standard_normal(length + _BURN_IN))
    cause, effect = (s[_BURN_IN:] / s[_BURN_IN:].std() for s in (cause, effect))
    x, y = (effect, cause) if direction == "y->x" else (cause, effect)
    names = {"x->y": ("x", "y"), "y->x": ("y", "x"), "none": ("none", "none")}[direction]
    return Synthetic(_pair(rng, x, y), {"family": "granger_causality", "kind": direction, "direction": direction,
                                        "cause": names[0], "effect": names[1], "lag": lag,
                                        "coefficient": coefficient})
