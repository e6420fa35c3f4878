"""Every generator's labels agree with an independent standard statistic of its values.

Each check recomputes the labelled property from the values alone with a textbook
statistic (OLS, periodogram, ADF, ARCH-LM, Granger F-test, ...) and never with the
generator's own code. Each (generator, kind) runs over 100 seeds, with lengths spread from
the generator's minimum to 300, and must agree on at least 99% of them (the generators keep only
realizations whose own check, a separate numpy/scipy statistic with a margin, shows the label;
benchmarks/synthetic_labels.py measures the agreement over 1000 seeds before and after that).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import signal, stats
from statsmodels.stats.diagnostic import acorr_ljungbox, het_arch, het_breuschpagan
from statsmodels.tsa.ar_model import AutoReg
from statsmodels.tsa.arima.model import ARIMA
from statsmodels.tsa.stattools import adfuller, grangercausalitytests

import itemsmith.handlers.synthetic as syn

SEEDS = 100
BAR = 0.99
STRICT = 1e-3  # significance level: "no effect" series must stay above it, effects below it


def _lengths(name: str) -> list[int]:
    low = syn.MIN_LENGTH[name]
    return [int(low + (300 - low) * (i % 4) / 3) for i in range(SEEDS)]


def agreement(name: str, kind: str | None, check: Callable[[np.ndarray, dict], bool]) -> float:
    """Share of seeds whose series passes `check(values, labels)`."""
    generator = syn.GENERATORS[name]
    kwargs = {} if kind is None else {"direction" if name == "granger_pair" else "kind": kind}
    hits = 0
    for seed, length in enumerate(_lengths(name)):
        made = generator(seed, length, **kwargs)
        hits += bool(check(made.values, made.labels))
    return hits / SEEDS


# ---------------------------------------------------------------- independent statistics


def ols_slope(x: np.ndarray) -> tuple[float, float]:
    """OLS slope of x on time and its two-sided p-value."""
    fit = stats.linregress(np.arange(x.size), x)
    return float(fit.slope), float(fit.pvalue)


def quadratic_term(x: np.ndarray) -> tuple[float, float]:
    """Coefficient of the (centred) squared-time term of an OLS quadratic fit, and its p-value."""
    u = np.linspace(-1.0, 1.0, x.size)
    fit = sm.OLS(x, np.column_stack([np.ones(x.size), u, u**2 - np.mean(u**2)])).fit()
    return float(fit.params[2]), float(fit.pvalues[2])


def periodogram_bins(x: np.ndarray) -> np.ndarray:
    """Raw periodogram at Fourier bins k = 1 .. n//2 (element k-1 is frequency k/n)."""
    return signal.periodogram(x, detrend="linear")[1][1 : x.size // 2 + 1]


def near_bin(k: int, n: int, period: float, slack: int = 0) -> bool:
    """Whether Fourier bin k (period n/k) is the bin nearest to `period`, give or take `slack`."""
    return np.floor(n / period) - slack <= k <= np.ceil(n / period) + slack


def fisher_g_significant(x: np.ndarray) -> bool:
    """Fisher's g test for a hidden periodicity, at level STRICT."""
    power = periodogram_bins(x)
    m = power.size
    critical = 1 - (STRICT / m) ** (1 / (m - 1))
    return power.max() / power.sum() > critical


def top_peaks(power: np.ndarray, count: int) -> list[int]:
    """Fourier bins (1-based) of the `count` largest local maxima of a periodogram."""
    padded = np.concatenate([[0.0], power, [0.0]])
    local = np.flatnonzero((padded[1:-1] > padded[:-2]) & (padded[1:-1] >= padded[2:]))
    return sorted((local[np.argsort(power[local])[::-1][:count]] + 1).tolist())


def instantaneous_frequency_trend(x: np.ndarray) -> float:
    """Curvature of the unwrapped Hilbert phase: > 0 when the cycles get faster (shorter)."""
    z = signal.detrend(x)
    phase = np.unwrap(np.angle(signal.hilbert(z)))
    trim = x.size // 10
    t = np.arange(x.size)[trim:-trim]
    return float(np.polyfit(t, phase[trim:-trim], 2)[0])


def robust_z(x: np.ndarray) -> np.ndarray:
    """(x - median) / (1.4826 * MAD)."""
    median = np.median(x)
    return (x - median) / (1.4826 * np.median(np.abs(x - median)))


def best_mean_split(x: np.ndarray, margin: float = 0.1) -> tuple[int, float]:
    """Split index minimising the squared error of a two-mean fit, and the mean difference (computed
    from the definition, not with the generators' cumulative-sum form)."""
    n = x.size
    cuts = np.arange(max(2, int(margin * n)), n - max(2, int(margin * n)))
    errors = [((x[:c] - x[:c].mean()) ** 2).sum() + ((x[c:] - x[c:].mean()) ** 2).sum() for c in cuts]
    cut = int(cuts[np.argmin(errors)])
    return cut, float(x[cut:].mean() - x[:cut].mean())


def best_variance_split(x: np.ndarray, margin: float = 0.2) -> tuple[int, float]:
    """Split index maximising the Gaussian likelihood of a two-variance fit, and var(after)/var(before)."""
    n = x.size
    cuts = np.arange(max(5, int(margin * n)), n - max(5, int(margin * n)))
    costs = [c * np.log(x[:c].var()) + (n - c) * np.log(x[c:].var()) for c in cuts]
    cut = int(cuts[np.argmin(costs)])
    return cut, float(x[cut:].var() / x[:cut].var())


def best_hinge(x: np.ndarray) -> tuple[int, float, float]:
    """Knot of the best continuous piecewise-linear fit, and the slopes before and after it."""
    n = x.size
    t = np.arange(n, dtype=float)
    best = (np.inf, 0, 0.0, 0.0)
    for knot in range(int(0.1 * n), int(0.9 * n)):
        design = np.column_stack([np.ones(n), t, np.maximum(t - knot, 0.0)])
        coef, residual, *_ = np.linalg.lstsq(design, x, rcond=None)
        if residual[0] < best[0]:
            best = (residual[0], knot, coef[1], coef[1] + coef[2])
    return best[1], best[2], best[3]


def harmonic_residual(x: np.ndarray) -> np.ndarray:
    """Residual of a least-squares sinusoid fit at the peak of a finely zero-padded periodogram."""
    n = x.size
    t = np.arange(n)
    frequencies = np.linspace(1.5 / n, 0.5, 20 * n)
    power = np.abs(np.exp(-2j * np.pi * np.outer(frequencies, t)) @ (x - x.mean()))
    frequency = frequencies[np.argmax(power)]
    design = np.column_stack([np.ones(n), np.cos(2 * np.pi * frequency * t), np.sin(2 * np.pi * frequency * t)])
    return x - design @ np.linalg.lstsq(design, x, rcond=None)[0]


def cross_correlation(x: np.ndarray, y: np.ndarray, max_lag: int) -> dict[int, float]:
    """corr(x[t - k], y[t]) for k = -max_lag .. max_lag (k > 0: y lags x)."""
    out = {}
    for k in range(-max_lag, max_lag + 1):
        a, b = (x[: x.size - k], y[k:]) if k >= 0 else (x[-k:], y[: y.size + k])
        out[k] = float(np.corrcoef(a, b)[0, 1])
    return out


def correlation_class(r: float) -> str:
    return "positive" if r > 0.4 else "negative" if r < -0.4 else "none"


def rolling_correlation_change(x: np.ndarray, y: np.ndarray) -> int:
    """Change point of the rolling correlation (window 15% of n): the best two-mean split of the
    rolling series, moved back by half a window to the centre of the windows."""
    window = max(10, int(0.15 * x.size))
    rolling = pd.Series(x).rolling(window).corr(pd.Series(y)).to_numpy()[window - 1 :]
    cut, _ = best_mean_split(rolling, margin=0.05)
    return cut + window - 1 - window // 2


def granger_p(cause: np.ndarray, effect: np.ndarray, lag: int) -> float:
    """p-value of the SSR F-test that `cause` Granger-causes `effect` at `lag`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = grangercausalitytests(np.column_stack([effect, cause]), maxlag=[lag])
    return float(result[lag][0]["ssr_ftest"][1])


def adf_p(x: np.ndarray, regression: str = "c") -> float:
    return float(adfuller(x, regression=regression, autolag="BIC", result_object=False)[1])


def arch_lm_p(r: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return float(het_arch(r - r.mean(), nlags=5)[1])


def abs_returns_lb_p(r: np.ndarray) -> float:
    """Ljung-Box p-value (10 lags) for autocorrelation of absolute returns (volatility clustering)."""
    return float(acorr_ljungbox(np.abs(r - r.mean()), lags=[10])["lb_pvalue"].iloc[0])


def variance_trend(r: np.ndarray) -> tuple[float, float]:
    """Breusch-Pagan p-value for variance depending on time, and the slope of r**2 on time."""
    exog = np.column_stack([np.ones(r.size), np.arange(r.size)])
    p = float(het_breuschpagan(r - r.mean(), exog)[1])
    return p, ols_slope((r - r.mean()) ** 2)[0]


# ---------------------------------------------------------------- checks per (generator, kind)


def _trend(x: np.ndarray, labels: dict) -> bool:
    slope, p = ols_slope(x)
    theil = stats.theilslopes(x)[0]
    if labels["kind"] == "none":
        return p > STRICT
    want = 1 if labels["kind"] == "up" else -1
    if not (p < STRICT and np.sign(slope) == want and np.sign(theil) == want == labels["slope_sign"]):
        return False
    curvature, p_curved = quadratic_term(x)
    if labels["shape"] == "linear":
        return p_curved > STRICT
    return p_curved < STRICT and np.sign(curvature) == want  # accelerating in the trend's direction


def _seasonality(x: np.ndarray, labels: dict) -> bool:
    kind, n = labels["kind"], x.size
    if kind == "none":
        return not fisher_g_significant(x)
    if kind == "shifting":
        faster = instantaneous_frequency_trend(x) > 0
        return faster == (labels["period_trend"] == "decreasing")
    if not fisher_g_significant(x):
        return False
    power = periodogram_bins(x)
    if kind == "multiple":
        peaks = top_peaks(power, 2)
        return all(near_bin(k, n, p, slack=1) for k, p in zip(peaks, sorted(labels["periods"], reverse=True),
                                                               strict=True))
    if not near_bin(int(np.argmax(power)) + 1, n, labels["period"]):
        return False
    if kind == "varying_amplitude":
        third = n // 3
        growing = x[-third:].std() > x[:third].std()
        return growing == (labels["amplitude_trend"] == "increasing")
    return True


def _anomaly(x: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    if kind == "level_shift":
        cut, diff = best_mean_split(x)
        return abs(cut - labels["start"]) <= 2 and np.sign(diff) == np.sign(labels["shift"])
    if kind == "contextual":
        z = robust_z(harmonic_residual(x))
        index = labels["anomaly_indices"][0]
        return int(np.argmax(np.abs(z))) == index and abs(z[index]) > 5 and abs(robust_z(x)[index]) < 3
    z = robust_z(x)
    flagged = np.flatnonzero(np.abs(z) > 5).tolist()
    if flagged != labels["anomaly_indices"]:
        return False
    if kind == "spike":
        return bool(np.all(np.sign(z[flagged]) == np.sign(labels["magnitudes"])))
    if kind == "step":
        return bool(np.all(np.sign(z[flagged]) == np.sign(labels["shift"])))
    return True


def _volatility(r: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    p_time, slope = variance_trend(r)
    if kind == "constant":
        return arch_lm_p(r) > STRICT and abs_returns_lb_p(r) > STRICT and p_time > STRICT
    if kind == "increasing":
        return p_time < STRICT and slope > 0
    clustered = abs_returns_lb_p(r) < 0.01
    if kind == "clustered":
        return clustered
    # leverage: squared returns are larger after falls than after rises
    return clustered and stats.spearmanr(r[:-1], r[1:] ** 2)[0] < 0


def _structural_break(x: np.ndarray, labels: dict) -> bool:
    kind, n = labels["kind"], x.size
    if kind == "none":
        # no mean step of 1.5 sd and no sd change of 2.5x (generated breaks are >= 4 sd and >= 3x)
        _, diff = best_mean_split(x)
        _, ratio = best_variance_split(x)
        return abs(diff) < 1.5 * x.std() and 1 / 2.5**2 < ratio < 2.5**2
    b = labels["break_index"]
    if kind == "level":
        cut, diff = best_mean_split(x)
        return abs(cut - b) <= 2 and np.sign(diff) == np.sign(labels["level_after"] - labels["level_before"])
    if kind == "trend":
        knot, before, after = best_hinge(x)
        turn = np.sign(labels["slope_after"] - labels["slope_before"])
        return abs(knot - b) <= max(3, 0.05 * n) and np.sign(after - before) == turn
    cut, ratio = best_variance_split(x)
    return abs(cut - b) <= 0.1 * n and (ratio > 1) == (labels["sigma_after"] > labels["sigma_before"])


def _stationarity(x: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    if kind == "stationary":
        return adf_p(x) < STRICT
    if kind == "random_walk":
        return adf_p(x) > STRICT and adf_p(x, "ct") > STRICT
    slope, p = ols_slope(x)
    return adf_p(x, "ct") < STRICT and p < STRICT and np.sign(slope) == np.sign(labels["slope"])


def _fat_tails(x: np.ndarray, labels: dict) -> bool:
    return (stats.kurtosis(x) > 1.0) == labels["fat_tailed"]


def _correlation(v: np.ndarray, labels: dict) -> bool:
    r, p = stats.pearsonr(v[:, 0], v[:, 1])
    if labels["kind"] == "none":
        return p > STRICT
    fisher_z_close = abs(np.arctanh(r) - np.arctanh(labels["rho"])) < 4 / np.sqrt(v.shape[0] - 3)
    return p < STRICT and np.sign(r) == np.sign(labels["rho"]) and fisher_z_close


def _cross_correlation(v: np.ndarray, labels: dict) -> bool:
    ccf = cross_correlation(v[:, 0], v[:, 1], max_lag=15)
    peak = max(ccf, key=lambda k: abs(ccf[k]))
    return peak == labels["lag"] and np.sign(ccf[peak]) == np.sign(labels["rho"])


def _dynamic_correlation(v: np.ndarray, labels: dict) -> bool:
    n = v.shape[0]
    edge = int(0.3 * n)
    before = correlation_class(np.corrcoef(v[:edge, 0], v[:edge, 1])[0, 1])
    after = correlation_class(np.corrcoef(v[-edge:, 0], v[-edge:, 1])[0, 1])
    change = rolling_correlation_change(v[:, 0], v[:, 1])
    return (before == correlation_class(labels["rho_before"]) and after == correlation_class(labels["rho_after"])
            and abs(change - labels["change_index"]) <= 0.1 * n)


def _granger(v: np.ndarray, labels: dict) -> bool:
    x, y, lag = v[:, 0], v[:, 1], labels["lag"]
    x_to_y, y_to_x = granger_p(x, y, lag) < STRICT, granger_p(y, x, lag) < STRICT
    return (x_to_y, y_to_x) == {"x->y": (True, False), "y->x": (False, True), "none": (False, False)}[labels["kind"]]


def _linear(x: np.ndarray, labels: dict) -> bool:
    return np.isclose(np.polyfit(np.arange(x.size), x, 1)[0], labels["slope"])


def _exponential(x: np.ndarray, labels: dict) -> bool:
    return np.isclose(np.polyfit(np.arange(x.size), np.log(x), 1)[0], labels["rate"])


def _periodic(x: np.ndarray, labels: dict) -> bool:
    return near_bin(int(np.argmax(periodogram_bins(x))) + 1, x.size, labels["period"])


def _arma_within(fit: object, skip: int, labels: dict) -> bool:
    """Whether each fitted coefficient lies within 4 standard errors of the labelled one."""
    q = labels["order"]
    estimate, error = fit.params[skip : skip + q], fit.bse[skip : skip + q]
    return bool(np.all(np.abs(estimate - np.array(labels["coefficients"])) < 4 * error))


def _ar(x: np.ndarray, labels: dict) -> bool:
    return _arma_within(AutoReg(x, lags=labels["order"], trend="c").fit(), 1, labels)


def _ma(x: np.ndarray, labels: dict) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _arma_within(ARIMA(x, order=(0, 0, labels["order"])).fit(), 1, labels)


def _white_noise(x: np.ndarray, labels: dict) -> bool:
    return float(acorr_ljungbox(x, lags=[10])["lb_pvalue"].iloc[0]) > STRICT


def _random_walk(x: np.ndarray, labels: dict) -> bool:
    steps = np.diff(x)
    return adf_p(x) > STRICT and float(acorr_ljungbox(steps, lags=[10])["lb_pvalue"].iloc[0]) > STRICT


CHECKS: dict[str, Callable[[np.ndarray, dict], bool]] = {
    "trend": _trend,
    "seasonality": _seasonality,
    "anomaly": _anomaly,
    "volatility": _volatility,
    "structural_break": _structural_break,
    "stationarity": _stationarity,
    "fat_tails": _fat_tails,
    "correlated_pair": _correlation,
    "lagged_pair": _cross_correlation,
    "dcc_pair": _dynamic_correlation,
    "granger_pair": _granger,
    "linear": _linear,
    "exponential": _exponential,
    "sine": _periodic,
    "sawtooth": _periodic,
    "square": _periodic,
    "ar": _ar,
    "ma": _ma,
    "white_noise": _white_noise,
    "random_walk": _random_walk,
}

CASES = [(name, kind) for name in syn.GENERATORS for kind in syn.KINDS.get(name, (None,))]


def test_every_generator_has_a_check() -> None:
    assert set(CHECKS) == set(syn.GENERATORS)


@pytest.mark.parametrize(("name", "kind"), CASES, ids=[f"{n}-{k}" if k else n for n, k in CASES])
def test_labels_agree_with_independent_statistic(name: str, kind: str | None) -> None:
    rate = agreement(name, kind, CHECKS[name])
    assert rate >= BAR, f"{name} {kind}: labels agree with the statistic on only {rate:.0%} of seeds"
