"""Textbook statistics computed from a series' values alone (numpy and scipy only).

They back the realization checks (`_realization`): a generated series is kept only when
these statistics, which know nothing of how it was made, show its label. Conventions:
p-values are two-sided unless said otherwise; indices are 0-based positions.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, signal, stats

# MacKinnon (2010), Table 1, one variable: critical value = b0 + b1/T + b2/T**2 + b3/T**3.
_ADF_CRITICAL = {
    ("c", 0.01): (-3.43035, -6.5393, -16.786, -79.433),
    ("c", 0.05): (-2.86154, -2.8903, -4.234, -40.040),
    ("c", 0.10): (-2.56677, -1.5384, -2.809, 0.0),
    ("ct", 0.01): (-3.95877, -9.0531, -28.428, -134.155),
    ("ct", 0.05): (-3.41049, -4.3904, -9.036, -45.374),
    ("ct", 0.10): (-3.12705, -2.5856, -3.925, -22.380),
}


def ols(y: np.ndarray, design: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficients, their standard errors and the residual sum of squares of an OLS fit."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    ssr = float(residual @ residual)
    dof = max(y.size - design.shape[1], 1)
    covariance = ssr / dof * np.linalg.pinv(design.T @ design)
    return coef, np.sqrt(np.maximum(np.diag(covariance), 0.0)), ssr


def _t_p(t: float, dof: int) -> float:
    return float(2 * stats.t.sf(abs(t), max(dof, 1)))


def slope_p(x: np.ndarray) -> tuple[float, float]:
    """OLS slope of x on time and its p-value."""
    fit = stats.linregress(np.arange(x.size), x)
    return float(fit.slope), float(fit.pvalue)


def curvature_p(x: np.ndarray) -> tuple[float, float]:
    """Coefficient of the centred squared-time term of a quadratic OLS fit, and its p-value."""
    u = np.linspace(-1.0, 1.0, x.size)
    design = np.column_stack([np.ones(x.size), u, u**2 - np.mean(u**2)])
    coef, se, _ = ols(x, design)
    return float(coef[2]), _t_p(coef[2] / se[2], x.size - 3) if se[2] > 0 else 1.0


def periodogram(x: np.ndarray) -> np.ndarray:
    """Periodogram of the linearly detrended series at Fourier bins k = 1 .. n//2 (element k-1)."""
    z = signal.detrend(x)
    return (np.abs(np.fft.rfft(z)) ** 2)[1 : x.size // 2 + 1]


def fisher_g_p(x: np.ndarray) -> float:
    """p-value of Fisher's g test for one hidden periodicity (first term of the exact formula)."""
    power = periodogram(x)
    m = power.size
    g = power.max() / power.sum()
    return float(min(1.0, m * (1.0 - g) ** (m - 1)))


def nearest_bins(n: int, period: float, slack: int = 0) -> range:
    """The Fourier bins nearest to `period` samples (floor and ceil of n / period), +- slack."""
    return range(int(np.floor(n / period)) - slack, int(np.ceil(n / period)) + slack + 1)


def local_peaks(power: np.ndarray, count: int) -> list[int]:
    """Bins (1-based) of the `count` largest local maxima of a periodogram, ascending."""
    padded = np.concatenate([[0.0], power, [0.0]])
    local = np.flatnonzero((padded[1:-1] > padded[:-2]) & (padded[1:-1] >= padded[2:]))
    return sorted((local[np.argsort(power[local])[::-1][:count]] + 1).tolist())


def dominant_period(x: np.ndarray) -> float:
    """Period (samples) at the peak of a 16-times zero-padded periodogram of the detrended series."""
    z = signal.detrend(x) * np.hanning(x.size)
    size = 16 * x.size
    power = np.abs(np.fft.rfft(z, size))
    power[: max(1, size // x.size)] = 0.0  # below one cycle per window
    return float(size / np.argmax(power))


def robust_z(x: np.ndarray) -> np.ndarray:
    """(x - median) / (1.4826 * median absolute deviation)."""
    median = np.median(x)
    mad = 1.4826 * np.median(np.abs(x - median))
    return (x - median) / (mad if mad > 0 else 1.0)


def best_mean_split(x: np.ndarray, margin: float = 0.1) -> tuple[int, float]:
    """Split index of the best two-mean least-squares fit, and mean(after) - mean(before)."""
    n = x.size
    cuts = np.arange(max(2, int(margin * n)), n - max(2, int(margin * n)))
    csum, csq = np.cumsum(x), np.cumsum(x**2)
    left = csq[cuts - 1] - csum[cuts - 1] ** 2 / cuts
    right = (csq[-1] - csq[cuts - 1]) - (csum[-1] - csum[cuts - 1]) ** 2 / (n - cuts)
    cut = int(cuts[np.argmin(left + right)])
    return cut, float(x[cut:].mean() - x[:cut].mean())


def best_variance_split(x: np.ndarray, margin: float = 0.2) -> tuple[int, float]:
    """Split index of the best two-variance Gaussian fit, and var(after) / var(before)."""
    n = x.size
    cuts = np.arange(max(5, int(margin * n)), n - max(5, int(margin * n)))
    csum, csq = np.cumsum(x), np.cumsum(x**2)
    var_left = csq[cuts - 1] / cuts - (csum[cuts - 1] / cuts) ** 2
    var_right = (csq[-1] - csq[cuts - 1]) / (n - cuts) - ((csum[-1] - csum[cuts - 1]) / (n - cuts)) ** 2
    costs = cuts * np.log(np.maximum(var_left, 1e-300)) + (n - cuts) * np.log(np.maximum(var_right, 1e-300))
    cut = int(cuts[np.argmin(costs)])
    return cut, float(x[cut:].var() / x[:cut].var())


def best_hinge(x: np.ndarray) -> tuple[int, float, float]:
    """Knot of the best continuous piecewise-linear least-squares fit, slopes before and after it."""
    n = x.size
    t = np.arange(n, dtype=float)
    best = (np.inf, 0, 0.0, 0.0)
    for knot in range(int(0.1 * n), int(0.9 * n)):
        design = np.column_stack([np.ones(n), t, np.maximum(t - knot, 0.0)])
        coef, *_ = np.linalg.lstsq(design, x, rcond=None)
        ssr = float(np.sum((x - design @ coef) ** 2))
        if ssr < best[0]:
            best = (ssr, knot, float(coef[1]), float(coef[1] + coef[2]))
    return best[1], best[2], best[3]


def sinusoid_residual(x: np.ndarray) -> np.ndarray:
    """x minus its least-squares sinusoid at the dominant (zero-padded periodogram) frequency."""
    t = np.arange(x.size)
    frequency = 1.0 / dominant_period(x)
    design = np.column_stack([np.ones(x.size), np.cos(2 * np.pi * frequency * t), np.sin(2 * np.pi * frequency * t)])
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    return x - design @ coef


def autocorrelation(x: np.ndarray, lags: int) -> np.ndarray:
    """Sample autocorrelation at lags 1 .. `lags`."""
    z = x - x.mean()
    denominator = float(z @ z)
    return np.array([float(z[k:] @ z[:-k]) / denominator for k in range(1, lags + 1)])


def ma_fit(x: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Conditional-sum-of-squares MA(`order`) fit of the demeaned series: coefficients (lag 1
    first) and their standard errors from the Gauss-Newton Hessian."""
    z = x - x.mean()

    def innovations(theta: np.ndarray) -> np.ndarray:
        return signal.lfilter([1.0], [1.0, *theta], z)

    fit = optimize.least_squares(innovations, np.zeros(order), bounds=(-0.99, 0.99))
    sigma2 = float(fit.fun @ fit.fun) / max(z.size - order, 1)
    covariance = sigma2 * np.linalg.pinv(fit.jac.T @ fit.jac)
    return fit.x, np.sqrt(np.maximum(np.diag(covariance), 0.0))


def ljung_box_p(x: np.ndarray, lags: int = 10) -> float:
    """Ljung-Box p-value for any autocorrelation up to `lags`."""
    n = x.size
    r = autocorrelation(x, lags)
    q = n * (n + 2) * float(np.sum(r**2 / (n - np.arange(1, lags + 1))))
    return float(stats.chi2.sf(q, lags))


def arch_lm_p(r: np.ndarray, lags: int = 5) -> float:
    """Engle's ARCH-LM p-value: squared (demeaned) returns regressed on their own `lags` lags."""
    e2 = (r - r.mean()) ** 2
    y = e2[lags:]
    design = np.column_stack([np.ones(y.size)] + [e2[lags - k : -k] for k in range(1, lags + 1)])
    _, _, ssr = ols(y, design)
    r2 = 1.0 - ssr / float(np.sum((y - y.mean()) ** 2))
    return float(stats.chi2.sf(y.size * r2, lags))


def variance_time_p(r: np.ndarray) -> tuple[float, float]:
    """Koenker's Breusch-Pagan p-value for variance depending on time, and the slope of the
    squared (demeaned) returns on time."""
    e2 = (r - r.mean()) ** 2
    fit = stats.linregress(np.arange(r.size), e2)
    return float(stats.chi2.sf(r.size * fit.rvalue**2, 1)), float(fit.slope)


def adf_t(x: np.ndarray, regression: str = "c") -> tuple[float, int]:
    """Augmented Dickey-Fuller t-statistic (constant, or constant and trend) with the number of
    lagged differences chosen by BIC up to 12 * (n / 100) ** 0.25; returns (t, observations used)."""
    dx = np.diff(x)
    n = x.size
    maxlag = int(np.ceil(12.0 * (n / 100.0) ** 0.25))
    maxlag = max(0, min(maxlag, n // 2 - 3))

    def design(lag: int, start: int) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(start, dx.size)  # dx[rows] is explained
        columns = [x[rows], np.ones(rows.size)]
        if regression == "ct":
            columns.append(rows.astype(float))
        columns += [dx[rows - k] for k in range(1, lag + 1)]
        return dx[rows], np.column_stack(columns)

    best_lag, best_bic = 0, np.inf
    for lag in range(maxlag + 1):
        y, d = design(lag, maxlag)
        _, _, ssr = ols(y, d)
        bic = y.size * np.log(ssr / y.size) + d.shape[1] * np.log(y.size)
        if bic < best_bic:
            best_lag, best_bic = lag, bic
    y, d = design(best_lag, best_lag)
    coef, se, _ = ols(y, d)
    return float(coef[0] / se[0]), int(y.size)


def adf_critical(level: float, observations: int, regression: str = "c") -> float:
    """MacKinnon's finite-sample ADF critical value at `level` (0.01, 0.05 or 0.10)."""
    b = _ADF_CRITICAL[regression, level]
    return float(b[0] + b[1] / observations + b[2] / observations**2 + b[3] / observations**3)


def granger_p(cause: np.ndarray, effect: np.ndarray, lag: int) -> float:
    """p-value of the F-test that `lag` past values of `cause` improve an AR(`lag`) fit of `effect`."""
    n = effect.size
    y = effect[lag:]
    own = [effect[lag - k : n - k] for k in range(1, lag + 1)]
    other = [cause[lag - k : n - k] for k in range(1, lag + 1)]
    restricted = np.column_stack([np.ones(y.size), *own])
    full = np.column_stack([restricted, *other])
    _, _, ssr_r = ols(y, restricted)
    _, _, ssr_f = ols(y, full)
    dof = y.size - full.shape[1]
    f = ((ssr_r - ssr_f) / lag) / (ssr_f / dof)
    return float(stats.f.sf(f, lag, dof))


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson correlation and its p-value."""
    result = stats.pearsonr(x, y)
    return float(result.statistic), float(result.pvalue)


def cross_correlation(x: np.ndarray, y: np.ndarray, max_lag: int) -> dict[int, float]:
    """corr(x[t - k], y[t]) for k = -max_lag .. max_lag (k > 0: y lags x)."""
    out = {}
    for k in range(-max_lag, max_lag + 1):
        a, b = (x[: x.size - k], y[k:]) if k >= 0 else (x[-k:], y[: y.size + k])
        out[k] = float(np.corrcoef(a, b)[0, 1])
    return out


def rolling_correlation(x: np.ndarray, y: np.ndarray, window: int) -> np.ndarray:
    """Correlation of x and y over each window of `window` consecutive samples (n - window + 1 values)."""
    def windows(a: np.ndarray) -> np.ndarray:
        return np.lib.stride_tricks.sliding_window_view(a, window)

    wx, wy = windows(x), windows(y)
    wx = wx - wx.mean(axis=1, keepdims=True)
    wy = wy - wy.mean(axis=1, keepdims=True)
    return np.sum(wx * wy, axis=1) / np.sqrt(np.sum(wx**2, axis=1) * np.sum(wy**2, axis=1))
