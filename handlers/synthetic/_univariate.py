"""Univariate feature families of Fons et al. (Table 1, Appendix B.1).

Each generator makes one property clearly present (large effect sizes relative to the noise)
and states it in the labels. Unless said otherwise the series is `level` plus Gaussian noise
of standard deviation `noise` plus the feature; level defaults to 20..100, noise to 0.5..2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from itemsmith.handlers.synthetic import _realization as checks
from itemsmith.handlers.synthetic._core import Synthetic, ar1, given, register, sign, uniform

TWO_PI = 2 * np.pi
_BURN_IN = 100
_MAX_DRAWS = 1000


def _level_noise(rng: np.random.Generator, level: float | None, noise: float | None) -> tuple[float, float]:
    return (float(given(level, lambda: uniform(rng, 20.0, 100.0))),
            float(given(noise, lambda: uniform(rng, 0.5, 2.0))))


@register(min_length=60, kinds=("up", "down", "none"), check=checks.trend)
def trend(rng: np.random.Generator, length: int = 120, *, kind: str | None = None, shape: str | None = None,
          change: float | None = None, level: float | None = None, noise: float | None = None) -> Synthetic:
    """A trend plus noise.

    kind: "up", "down" or "none" (no trend: level plus noise).
    shape: "linear", "quadratic" (t**2: flat start, accelerating) or "exponential" (slow start,
    then steep); drawn if None; always "none" for kind "none".
    change: how far the trend moves from the first to the last sample (absolute);
    default 8 to 20 times `noise`.

    Labels: direction (= kind), shape, change (signed rise of the trend component from first
    to last sample), slope (average change per step, = change / (length - 1)), slope_sign
    (1, -1 or 0), level (trend value at t = 0), noise; curvature (2 to 5: the exponential
    shape is expm1(curvature * u) / expm1(curvature), u from 0 to 1) for shape "exponential".
    """
    level, noise = _level_noise(rng, level, noise)
    u = np.linspace(0.0, 1.0, length)
    truth: dict[str, object] = {}
    if kind == "none":
        shape, change, profile = "none", 0.0, np.zeros(length)
    else:
        shape = given(shape, lambda: ("linear", "quadratic", "exponential")[int(rng.integers(3))])
        change = (1 if kind == "up" else -1) * abs(float(given(change, lambda: uniform(rng, 8.0, 20.0) * noise)))
        if shape == "linear":
            profile = u
        elif shape == "quadratic":
            profile = u**2
        elif shape == "exponential":
            curvature = uniform(rng, 2.0, 5.0)
            profile, truth["curvature"] = np.expm1(curvature * u) / np.expm1(curvature), curvature
        else:
            raise ValueError(f"shape must be linear, quadratic or exponential, got {shape!r}")
    values = level + change * profile + noise * rng.standard_normal(length)
    return Synthetic(values, {"family": "trend", "kind": kind, "direction": kind, "shape": shape,
                              "change": change, "slope": change / (length - 1),
                              "slope_sign": int(np.sign(change)), "level": level, "noise": noise, **truth})


@register(min_length=60, kinds=("none", "fixed", "varying_amplitude", "shifting", "multiple"), check=checks.seasonality)
def seasonality(rng: np.random.Generator, length: int = 120, *, kind: str | None = None,
                period: float | None = None, periods: Sequence[float] | None = None,
                amplitude: float | None = None, level: float | None = None,
                noise: float | None = None) -> Synthetic:
    """Sinusoidal seasonality plus noise.

    kind:
    - "fixed": one period. `period` default: an integer 5 .. length//4 (at least 4 cycles).
    - "varying_amplitude": one period, amplitude growing or shrinking linearly by a factor 3..4.
    - "shifting": the period drifts linearly from periods[0] to periods[1] (cycles get longer
      or shorter; ratio 1.8..2.4 by default).
    - "multiple": two seasonal cycles added, periods[0] short and periods[1] at least 3 times longer.
    - "none": level plus noise only.
    amplitude: of every sine component (for varying_amplitude: the larger end); default 3 to 6
    times `noise` (varying_amplitude: smaller end 2.5 to 3 times noise).

    Labels: has_seasonality, level, noise; fixed: period, amplitude, phase;
    varying_amplitude: period, amplitude_start, amplitude_end, amplitude_trend ("increasing" /
    "decreasing"); shifting: period_start, period_end, period_trend ("increasing" = cycles get
    longer); multiple: periods (ascending), amplitudes, phases.
    """
    level, noise = _level_noise(rng, level, noise)
    t = np.arange(length)
    truth: dict[str, object] = {"has_seasonality": kind != "none"}
    if kind == "none":
        signal = np.zeros(length)
    elif kind in ("fixed", "varying_amplitude"):
        period = float(given(period, lambda: int(rng.integers(5, length // 4 + 1))))
        phase = uniform(rng, 0.0, TWO_PI)
        if kind == "fixed":
            amp = float(given(amplitude, lambda: uniform(rng, 3.0, 6.0) * noise))
            envelope = np.full(length, amp)
            truth.update(period=period, amplitude=amp, phase=phase)
        else:
            small = uniform(rng, 2.5, 3.0) * noise
            big = float(given(amplitude, lambda: small * uniform(rng, 3.0, 4.0)))
            start, end = (small, big) if sign(rng) > 0 else (big, small)
            envelope = np.linspace(start, end, length)
            truth.update(period=period, amplitude_start=start, amplitude_end=end,
                         amplitude_trend="increasing" if end > start else "decreasing")
        signal = envelope * np.sin(TWO_PI * t / period + phase)
    elif kind == "shifting":
        if periods is None:
            short = uniform(rng, max(5.0, length / 20), length / 8)
            pair = [short, short * uniform(rng, 1.8, 2.4)]
            periods = pair if sign(rng) > 0 else pair[::-1]
        start, end = (float(p) for p in periods)
        amp = float(given(amplitude, lambda: uniform(rng, 3.0, 6.0) * noise))
        frequency = np.linspace(1 / start, 1 / end, length)
        phase = uniform(rng, 0.0, TWO_PI) + TWO_PI * np.concatenate([[0.0], np.cumsum(frequency[:-1])])
        signal = amp * np.sin(phase)
        truth.update(period_start=start, period_end=end, amplitude=amp,
                     period_trend="increasing" if end > start else "decreasing")
    else:
        if periods is None:
            short = int(rng.integers(4, max(4, length // 15) + 1))
            periods = [short, int(rng.integers(3 * short, length // 3 + 1))]
        periods = sorted(float(p) for p in periods)
        amps = [float(given(amplitude, lambda: uniform(rng, 3.0, 6.0) * noise)) for _ in periods]
        phases = [uniform(rng, 0.0, TWO_PI) for _ in periods]
        signal = sum(a * np.sin(TWO_PI * t / p + f) for a, p, f in zip(amps, periods, phases, strict=True))
        truth.update(periods=periods, amplitudes=amps, phases=phases)
    values = level + signal + noise * rng.standard_normal(length)
    return Synthetic(values, {"family": "seasonality", "kind": kind, "level": level, "noise": noise, **truth})


def _block(rng: np.random.Generator, length: int, position: int | None) -> tuple[int, int]:
    """A short run [start, end) well inside the series: 3..10% of its length."""
    size = int(rng.integers(max(3, length // 30), max(4, length // 10) + 1))
    start = int(given(position, lambda: int(rng.integers(int(0.15 * length), int(0.85 * length) - size + 1))))
    return start, min(start + size, length)


def _spike_positions(rng: np.random.Generator, length: int, count: int, position: int | None) -> list[int]:
    """`count` distinct indices at least 5 apart, away from the ends (one of them `position`)."""
    margin = max(2, length // 20)
    if not 1 <= count <= (length - 2 * margin) // 10:
        raise ValueError(f"spike count must be 1..{(length - 2 * margin) // 10} for length {length}, got {count}")
    chosen = [] if position is None else [int(position)]
    while len(chosen) < count:
        candidate = int(rng.integers(margin, length - margin))
        if all(abs(candidate - c) >= 5 for c in chosen):
            chosen.append(candidate)
    return sorted(chosen)


@register(min_length=40, kinds=("none", "spike", "level_shift", "step", "dropout", "contextual"), check=checks.anomaly)
def anomaly(rng: np.random.Generator, length: int = 120, *, kind: str | None = None, count: int | None = None,
            position: int | None = None, level: float | None = None, noise: float | None = None) -> Synthetic:
    """Anomalies and outliers in an otherwise regular series.

    kind:
    - "spike": `count` (default 1 to 3: single, double, triple) isolated points pushed up or
      down by 8 to 15 times `noise`; at least 5 steps apart.
    - "level_shift": from `start` to the end the level moves by 5 to 10 times noise.
    - "step": a temporary plateau: samples start..end-1 (3 to 10% of the length) moved by
      10 to 14 times noise, then back to normal.
    - "dropout": a missing-data-like dip: samples start..end-1 read exactly 0 (the level is
      at least 10 noise sd above 0).
    - "contextual": on a seasonal series (period 8 .. length//5, amplitude 5 to 8 times noise),
      one sample near a peak takes a trough value (or near a trough a peak value): normal
      for the series as a whole, wrong for its place in the cycle.
    - "none": level plus noise only.
    position: where the anomaly is (a spike index, the start of a block, the contextual
    index, best near a peak or trough of the cycle); drawn if None.

    Labels: has_anomaly, anomaly_indices (sorted, empty for "none"), level, noise;
    spike: count, magnitudes (signed offsets, in anomaly_indices order);
    level_shift: start, end (= length), shift; step: start, end, shift; dropout: start, end,
    fill_value; contextual: period, amplitude, expected_value, magnitude (value - expected).
    """
    level, noise = _level_noise(rng, level, noise)
    values = level + noise * rng.standard_normal(length)
    truth: dict[str, object] = {"has_anomaly": kind != "none"}
    indices: list[int] = []
    if kind == "spike":
        count = int(given(count, lambda: int(rng.integers(1, 4))))
        indices = _spike_positions(rng, length, count, position)
        magnitudes = [sign(rng) * uniform(rng, 8.0, 15.0) * noise for _ in indices]
        values[indices] += magnitudes
        truth.update(count=count, magnitudes=magnitudes)
    elif kind == "level_shift":
        start = int(given(position, lambda: int(rng.integers(int(0.25 * length), int(0.75 * length)))))
        shift = sign(rng) * uniform(rng, 5.0, 10.0) * noise
        values[start:] += shift
        indices = list(range(start, length))
        truth.update(start=start, end=length, shift=shift)
    elif kind in ("step", "dropout"):
        start, end = _block(rng, length, position)
        indices = list(range(start, end))
        if kind == "step":
            shift = sign(rng) * uniform(rng, 10.0, 14.0) * noise
            values[start:end] += shift
            truth.update(start=start, end=end, shift=shift)
        else:
            values[start:end] = 0.0
            truth.update(start=start, end=end, fill_value=0.0)
    elif kind == "contextual":
        period = float(rng.integers(8, length // 5 + 1))
        amp = uniform(rng, 5.0, 8.0) * noise
        cycle = np.sin(TWO_PI * np.arange(length) / period + uniform(rng, 0.0, TWO_PI))
        values += amp * cycle
        if position is None:
            inside = np.arange(int(0.15 * length), int(0.85 * length))
            extreme = inside[np.abs(cycle[inside]) > 0.9]
            position = int(extreme[rng.integers(extreme.size)])
        expected = level + amp * cycle[position]
        values[position] = level - np.sign(cycle[position]) * amp + noise * rng.standard_normal()
        indices = [int(position)]
        truth.update(period=period, amplitude=amp, expected_value=expected,
                     magnitude=values[position] - expected)
    return Synthetic(values, {"family": "anomaly", "kind": kind, "anomaly_indices": indices,
                              "level": level, "noise": noise, **truth})


def _volatility_path(rng: np.random.Generator, length: int,
                     next_var: Callable[[float, float], float], var0: float) -> np.ndarray:
    """Returns r[t] = sqrt(var[t]) * z[t] with var[t + 1] = next_var(var[t], z[t]), after a burn-in.

    Paths are redrawn until the conditional standard deviation's 90th percentile is at least
    3 times its 10th, so calm and turbulent stretches are both present in this series.
    """
    for _ in range(_MAX_DRAWS):
        z = rng.standard_normal(length + _BURN_IN)
        var = np.empty_like(z)
        var[0] = var0
        for t in range(z.size - 1):
            var[t + 1] = next_var(var[t], z[t])
        sd = np.sqrt(var[_BURN_IN:])
        low, high = np.percentile(sd, [10, 90])
        if high >= 3 * low:
            return sd * z[_BURN_IN:]
    raise RuntimeError(f"no clearly clustered volatility path in {_MAX_DRAWS} draws")


@register(min_length=200, kinds=("constant", "increasing", "clustered", "leverage"), check=checks.volatility)
def volatility(rng: np.random.Generator, length: int = 250, *, kind: str | None = None,
               sigma: float | None = None) -> Synthetic:
    """Returns-like series (mean 0) whose volatility follows `kind`; `np.cumsum` gives a price path.

    kind:
    - "constant": Gaussian noise with standard deviation `sigma` (default 0.5 to 2).
    - "increasing": standard deviation rising linearly from sigma to sigma * (1 + k), k 4 to 6.
    - "clustered": GARCH(1,1), var[t] = omega + alpha * r[t-1]**2 + beta * var[t-1], with
      alpha 0.25..0.35 and alpha + beta 0.93..0.97: calm and turbulent stretches.
    - "leverage": GJR-GARCH(1,1), var[t] = omega + (alpha + gamma * [r[t-1] < 0]) * r[t-1]**2
      + beta * var[t-1], alpha 0..0.05, gamma 0.6..0.8, alpha + gamma/2 + beta 0.85..0.9:
      volatility jumps after falls, hardly after rises (leverage effect; also clustered).
    For "clustered" and "leverage" the path is redrawn until the conditional standard
    deviation varies at least 3-fold (10th to 90th percentile) within the series.

    Labels: sigma (constant sd, starting sd, or the unconditional level the model reverts to),
    clustered, asymmetric; increasing: sigma_start, sigma_end; clustered: omega, alpha, beta;
    leverage: omega, alpha, beta, gamma.
    """
    sigma = float(given(sigma, lambda: uniform(rng, 0.5, 2.0)))
    truth: dict[str, object] = {"clustered": kind in ("clustered", "leverage"), "asymmetric": kind == "leverage"}
    if kind == "constant":
        values = sigma * rng.standard_normal(length)
    elif kind == "increasing":
        scale = sigma * np.linspace(1.0, 1.0 + uniform(rng, 4.0, 6.0), length)
        values = scale * rng.standard_normal(length)
        truth.update(sigma_start=scale[0], sigma_end=scale[-1])
    elif kind == "clustered":
        alpha = uniform(rng, 0.25, 0.35)
        beta = uniform(rng, 0.93, 0.97) - alpha
        omega = sigma**2 * (1 - alpha - beta)
        values = _volatility_path(rng, length, lambda v, z: omega + (alpha * z**2 + beta) * v, sigma**2)
        truth.update(omega=omega, alpha=alpha, beta=beta)
    else:
        alpha, gamma = uniform(rng, 0.0, 0.05), uniform(rng, 0.6, 0.8)
        beta = uniform(rng, 0.85, 0.9) - alpha - gamma / 2
        omega = sigma**2 * (1 - alpha - gamma / 2 - beta)
        values = _volatility_path(rng, length, lambda v, z: omega + (alpha + gamma * (z < 0)) * z**2 * v + beta * v,
                                  sigma**2)
        truth.update(omega=omega, alpha=alpha, beta=beta, gamma=gamma)
    return Synthetic(values, {"family": "volatility", "kind": kind, "sigma": sigma, **truth})


_SLOPE_TURNS = ((1, -1), (-1, 1), (0, 1), (0, -1), (1, 0), (-1, 0))


@register(min_length=60, kinds=("none", "level", "trend", "variance"), check=checks.structural_break)
def structural_break(rng: np.random.Generator, length: int = 150, *, kind: str | None = None,
                     break_index: int | None = None, level: float | None = None,
                     noise: float | None = None) -> Synthetic:
    """A series whose generating process changes once, at `break_index` (default 30..70% of length).

    kind:
    - "level": the mean jumps by 4 to 8 times `noise`.
    - "trend": piecewise linear and continuous: the slope changes at the break (up then down,
      flat then rising, ...); each segment moves 10 to 16 times noise (or stays flat).
    - "variance": the noise standard deviation grows or shrinks by a factor 3 to 5; the mean
      stays.
    - "none": level plus noise only, no break.

    Labels: has_break, level, noise; for a break: break_index (first sample of the new regime);
    level: level_before, level_after; trend: slope_before, slope_after (per step);
    variance: sigma_before, sigma_after.
    """
    level, noise = _level_noise(rng, level, noise)
    truth: dict[str, object] = {"has_break": kind != "none"}
    if kind == "none":
        values = level + noise * rng.standard_normal(length)
        return Synthetic(values, {"family": "structural_break", "kind": kind, "level": level,
                                  "noise": noise, **truth})
    b = int(given(break_index, lambda: int(rng.integers(int(0.3 * length), int(0.7 * length) + 1))))
    t = np.arange(length)
    sd = np.full(length, noise)
    mean = np.full(length, level)
    if kind == "level":
        after = level + sign(rng) * uniform(rng, 4.0, 8.0) * noise
        mean[b:] = after
        truth.update(level_before=level, level_after=after)
    elif kind == "trend":
        first, second = _SLOPE_TURNS[int(rng.integers(len(_SLOPE_TURNS)))]
        slope_before = first * uniform(rng, 10.0, 16.0) * noise / b
        slope_after = second * uniform(rng, 10.0, 16.0) * noise / (length - b)
        mean = level + np.where(t < b, slope_before * t, slope_before * b + slope_after * (t - b))
        truth.update(slope_before=slope_before, slope_after=slope_after)
    else:
        factor = uniform(rng, 3.0, 5.0)
        after = noise * factor if sign(rng) > 0 else noise / factor
        sd[b:] = after
        truth.update(sigma_before=noise, sigma_after=after)
    values = mean + sd * rng.standard_normal(length)
    return Synthetic(values, {"family": "structural_break", "kind": kind, "break_index": b,
                              "level": level, "noise": noise, **truth})


@register(min_length=100, kinds=("stationary", "random_walk", "trend_stationary"), check=checks.stationarity)
def stationarity(rng: np.random.Generator, length: int = 150, *, kind: str | None = None,
                 level: float | None = None, noise: float | None = None) -> Synthetic:
    """Stationary versus non-stationary behaviour.

    kind:
    - "stationary": level + noise * AR(1) with phi -0.2..0.5 (mean-reverting, constant variance).
    - "random_walk": level + cumulative sum of N(0, noise**2) steps (unit root: wanders off).
    - "trend_stationary": level + a straight line (total change 10 to 20 times noise, sign
      random) + noise * AR(1) with phi 0..0.5; stationary around the trend.

    Labels: stationary (True only for "stationary"), unit_root, level, noise; phi for
    "stationary" and "trend_stationary"; slope (per step) for "trend_stationary".
    """
    level, noise = _level_noise(rng, level, noise)
    truth: dict[str, object] = {"stationary": kind == "stationary", "unit_root": kind == "random_walk"}
    if kind == "random_walk":
        values = level + np.concatenate([[0.0], np.cumsum(noise * rng.standard_normal(length - 1))])
    else:
        phi = uniform(rng, -0.2, 0.5) if kind == "stationary" else uniform(rng, 0.0, 0.5)
        values = level + noise * ar1(rng, length, phi)
        truth["phi"] = phi
        if kind == "trend_stationary":
            slope = sign(rng) * uniform(rng, 10.0, 20.0) * noise / (length - 1)
            values += slope * np.arange(length)
            truth["slope"] = slope
    return Synthetic(values, {"family": "stationarity", "kind": kind, "level": level, "noise": noise, **truth})


@register(min_length=200, kinds=("fat_tailed", "gaussian"), check=checks.fat_tails)
def fat_tails(rng: np.random.Generator, length: int = 250, *, kind: str | None = None, df: float | None = None,
              scale: float | None = None) -> Synthetic:
    """Independent returns-like draws (mean 0): Student-t with few degrees of freedom (frequent
    extreme values) or Gaussian.

    kind: "fat_tailed" (Student-t, `df` default 2.2 to 3) or "gaussian".
    scale: multiplies the draws; default 0.5 to 2.

    Labels: fat_tailed, distribution ("student_t" / "normal"), scale; df for "fat_tailed".
    """
    scale = float(given(scale, lambda: uniform(rng, 0.5, 2.0)))
    truth: dict[str, object] = {"fat_tailed": kind == "fat_tailed"}
    if kind == "fat_tailed":
        df = float(given(df, lambda: uniform(rng, 2.2, 3.0)))
        values = scale * rng.standard_t(df, length)
        truth.update(distribution="student_t", df=df)
    else:
        values = scale * rng.standard_normal(length)
        truth["distribution"] = "normal"
    return Synthetic(values, {"family": "fat_tails", "kind": kind, "scale": scale, **truth})
