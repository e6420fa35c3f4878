"""TimeSeriesExam base patterns: aperiodic (linear, exponential), periodic (sine, sawtooth,
square) and stochastic (AR, MA, white noise, random walk).

Deterministic patterns carry no noise: add `white_noise(...)` with `add(...)`.
Labels: family "pattern", kind = the pattern's name, category "aperiodic" / "periodic" / "stochastic".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.signal import lfilter

from itemsmith.handlers.synthetic import _realization as checks
from itemsmith.handlers.synthetic._core import Synthetic, given, register, sign, uniform

_BURN_IN = 200


def _pattern(values: np.ndarray, kind: str, category: str, **truth: object) -> Synthetic:
    return Synthetic(values, {"family": "pattern", "kind": kind, "category": category, **truth})


def _period(rng: np.random.Generator, length: int) -> int:
    """An integer period that fits at least 3 cycles into `length`."""
    return int(rng.integers(max(4, length // 20), length // 3 + 1))


@register(min_length=2)
def linear(rng: np.random.Generator, length: int = 100, *, slope: float | None = None,
           intercept: float | None = None) -> Synthetic:
    """A straight line `intercept + slope * t`, t = 0..length-1 (no noise).

    Defaults: slope +-0.1 to 1 (sign random), intercept 0 to 100.
    Labels: slope, intercept, direction ("up" if slope > 0, "down" if < 0, "none").
    """
    slope = float(given(slope, lambda: sign(rng) * uniform(rng, 0.1, 1.0)))
    intercept = float(given(intercept, lambda: uniform(rng, 0.0, 100.0)))
    direction = "up" if slope > 0 else "down" if slope < 0 else "none"
    return _pattern(intercept + slope * np.arange(length), "linear", "aperiodic",
                    slope=slope, intercept=intercept, direction=direction)


@register(min_length=2)
def exponential(rng: np.random.Generator, length: int = 100, *, rate: float | None = None,
                scale: float | None = None) -> Synthetic:
    """Exponential growth or decay `scale * exp(rate * t)`, t = 0..length-1 (no noise).

    Defaults: rate such that the series grows or shrinks by a factor e**1.5 to e**3.5 over its
    length (sign random), scale 1 to 10.
    Labels: rate (per step), scale, direction ("up" for growth, "down" for decay),
    ratio (last value / first value).
    """
    rate = float(given(rate, lambda: sign(rng) * uniform(rng, 1.5, 3.5) / (length - 1)))
    scale = float(given(scale, lambda: uniform(rng, 1.0, 10.0)))
    direction = "up" if rate > 0 else "down" if rate < 0 else "none"
    return _pattern(scale * np.exp(rate * np.arange(length)), "exponential", "aperiodic",
                    rate=rate, scale=scale, direction=direction, ratio=float(np.exp(rate * (length - 1))))


def _periodic(rng: np.random.Generator, length: int, period: float | None, amplitude: float | None,
              phase: float | None) -> tuple[np.ndarray, float, float, float]:
    """Cycle position (in cycles, from 0) of every step, and the drawn period, amplitude, phase."""
    period = float(given(period, lambda: _period(rng, length)))
    amplitude = float(given(amplitude, lambda: uniform(rng, 1.0, 10.0)))
    phase = float(given(phase, lambda: uniform(rng, 0.0, 2 * np.pi)))
    return np.arange(length) / period + phase / (2 * np.pi), period, amplitude, phase


@register(min_length=12)
def sine(rng: np.random.Generator, length: int = 100, *, period: float | None = None,
         amplitude: float | None = None, phase: float | None = None) -> Synthetic:
    """A sine wave `amplitude * sin(2*pi*t/period + phase)` (no noise).

    Defaults: integer period from max(4, length//20) to length//3 (at least 3 cycles),
    amplitude 1 to 10, phase 0 to 2*pi.
    Labels: period (steps per cycle), amplitude, phase (radians).
    """
    cycles, period, amplitude, phase = _periodic(rng, length, period, amplitude, phase)
    return _pattern(amplitude * np.sin(2 * np.pi * cycles), "sine", "periodic",
                    period=period, amplitude=amplitude, phase=phase)


@register(min_length=12)
def sawtooth(rng: np.random.Generator, length: int = 100, *, period: float | None = None,
             amplitude: float | None = None, phase: float | None = None) -> Synthetic:
    """A rising sawtooth between -amplitude and +amplitude that drops back once per period (no noise).

    Defaults: integer period from max(4, length//20) to length//3, amplitude 1 to 10, phase
    0 to 2*pi. Labels: period (steps per cycle), amplitude, phase (radians; 2*pi is one cycle).
    """
    cycles, period, amplitude, phase = _periodic(rng, length, period, amplitude, phase)
    return _pattern(amplitude * (2 * (cycles % 1.0) - 1), "sawtooth", "periodic",
                    period=period, amplitude=amplitude, phase=phase)


@register(min_length=12)
def square(rng: np.random.Generator, length: int = 100, *, period: float | None = None,
           amplitude: float | None = None, phase: float | None = None) -> Synthetic:
    """A square wave: +amplitude for the first half of each period, -amplitude for the second (no noise).

    Defaults: integer period from max(4, length//20) to length//3, amplitude 1 to 10, phase
    0 to 2*pi. Labels: period (steps per cycle), amplitude, phase (radians; 2*pi is one cycle).
    """
    cycles, period, amplitude, phase = _periodic(rng, length, period, amplitude, phase)
    return _pattern(np.where(cycles % 1.0 < 0.5, amplitude, -amplitude), "square", "periodic",
                    period=period, amplitude=amplitude, phase=phase)


def _pacf_to_ar(partial: Sequence[float]) -> list[float]:
    """AR coefficients with the given partial autocorrelations (all in (-1, 1): stationary)."""
    phi: list[float] = []
    for r in partial:
        phi = [p - r * q for p, q in zip(phi, reversed(phi), strict=True)] + [float(r)]
    return phi


def _outside_unit_circle(coefficients: list[float], sign_: float) -> bool:
    """Whether all roots of 1 + sign_ * (c1 z + c2 z**2 + ...) lie outside the unit circle."""
    return all(abs(root) > 1.0 for root in np.roots([sign_ * c for c in coefficients[::-1]] + [1.0]))


@register(min_length=60, check=checks.ar)
def ar(rng: np.random.Generator, length: int = 200, *, coefficients: Sequence[float] | None = None,
       order: int | None = None, sigma: float | None = None) -> Synthetic:
    """A stationary AR(p) process `x[t] = sum_i coefficients[i] * x[t-1-i] + sigma * e[t]`, mean 0.

    Defaults: order 1 or 2 (used only when coefficients is None); coefficients drawn through
    partial autocorrelations of size 0.4 to 0.8 (random signs), so the process is stationary
    with clearly visible memory; sigma 0.5 to 2. Given coefficients must be stationary.
    Labels: order, coefficients (list, lag 1 first), sigma.
    """
    if coefficients is None:
        order = int(given(order, lambda: int(rng.integers(1, 3))))
        coefficients = _pacf_to_ar([sign(rng) * uniform(rng, 0.4, 0.8) for _ in range(order)])
    coefficients = [float(c) for c in coefficients]
    if not _outside_unit_circle(coefficients, -1.0):
        raise ValueError(f"AR coefficients {coefficients} are not stationary")
    sigma = float(given(sigma, lambda: uniform(rng, 0.5, 2.0)))
    e = sigma * rng.standard_normal(length + _BURN_IN)
    values = lfilter([1.0], [1.0, *(-c for c in coefficients)], e)[_BURN_IN:]
    return _pattern(values, "ar", "stochastic", order=len(coefficients), coefficients=coefficients,
                    sigma=sigma)


@register(min_length=60, check=checks.ma)
def ma(rng: np.random.Generator, length: int = 200, *, coefficients: Sequence[float] | None = None,
       order: int | None = None, sigma: float | None = None) -> Synthetic:
    """An invertible MA(q) process `x[t] = sigma * (e[t] + sum_i coefficients[i] * e[t-1-i])`, mean 0.

    Its autocorrelation is zero beyond lag q. Defaults: order 1 or 2 (used only when
    coefficients is None); coefficients drawn through partial values of size 0.5 to 0.8
    (random signs), which keeps the process invertible (so the coefficients are identifiable);
    sigma 0.5 to 2. Given coefficients must be invertible.
    Labels: order, coefficients (list, lag 1 first), sigma.
    """
    if coefficients is None:
        order = int(given(order, lambda: int(rng.integers(1, 3))))
        coefficients = [-c for c in _pacf_to_ar([sign(rng) * uniform(rng, 0.5, 0.8) for _ in range(order)])]
    coefficients = [float(c) for c in coefficients]
    if not _outside_unit_circle(coefficients, 1.0):
        raise ValueError(f"MA coefficients {coefficients} are not invertible")
    sigma = float(given(sigma, lambda: uniform(rng, 0.5, 2.0)))
    e = sigma * rng.standard_normal(length + len(coefficients))
    values = lfilter([1.0, *coefficients], [1.0], e)[len(coefficients):]
    return _pattern(values, "ma", "stochastic", order=len(coefficients), coefficients=coefficients,
                    sigma=sigma)


@register(min_length=60, check=checks.white_noise)
def white_noise(rng: np.random.Generator, length: int = 100, *, sigma: float | None = None,
                mean: float = 0.0) -> Synthetic:
    """Independent Gaussian noise with standard deviation `sigma` (default 0.5 to 2) around `mean`.

    Labels: sigma, mean.
    """
    sigma = float(given(sigma, lambda: uniform(rng, 0.5, 2.0)))
    return _pattern(mean + sigma * rng.standard_normal(length), "white_noise", "stochastic",
                    sigma=sigma, mean=float(mean))


@register(min_length=60, check=checks.random_walk)
def random_walk(rng: np.random.Generator, length: int = 100, *, sigma: float | None = None,
                drift: float = 0.0, initial: float = 0.0) -> Synthetic:
    """A random walk (unit root): `x[0] = initial`, `x[t] = x[t-1] + drift + sigma * e[t]`.

    Defaults: sigma 0.5 to 2, no drift. Labels: sigma, drift, initial.
    """
    sigma = float(given(sigma, lambda: uniform(rng, 0.5, 2.0)))
    steps = drift + sigma * rng.standard_normal(length - 1)
    return _pattern(initial + np.concatenate([[0.0], np.cumsum(steps)]), "random_walk", "stochastic",
                    sigma=sigma, drift=float(drift), initial=float(initial))
