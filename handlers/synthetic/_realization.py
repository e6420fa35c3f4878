"""Realization checks: does a generated series show its label, with a margin?

A generator draws a series with the right parameters, but one realization can still fail to
show its property (an "uncorrelated" pair with r = -0.3, a random walk that looks
mean-reverting). Each check here re-answers the label from the values alone with a textbook
statistic (`_statistics`, which shares no code with the generators) at a stricter level than
anyone would grade at, so a series that passes shows its label clearly. `register(check=...)`
redraws a generator's realization until its check passes (bounded by `_core.MAX_DRAWS`).

A check gets `values` and `labels` and returns whether they agree.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from itemsmith.handlers.synthetic import _statistics as st

CLEAR = 1e-5  # an effect the label claims must be significant at this level
ABSENT = 0.05  # an effect the label denies must not be significant even at this level


def _thirds_ratio(x: np.ndarray) -> float:
    """Standard deviation of the last third over that of the first third."""
    third = x.size // 3
    return float(x[-third:].std() / x[:third].std())


def trend(x: np.ndarray, labels: dict) -> bool:
    slope, p = st.slope_p(x)
    curvature, p_curved = st.curvature_p(x)
    if labels["kind"] == "none":
        return p > ABSENT and p_curved > ABSENT
    want = 1 if labels["kind"] == "up" else -1
    if not (p < CLEAR and np.sign(slope) == want):
        return False
    if labels["shape"] == "linear":
        return p_curved > ABSENT
    return p_curved < CLEAR and np.sign(curvature) == want


def seasonality(x: np.ndarray, labels: dict) -> bool:
    kind, n = labels["kind"], x.size
    if kind == "none":
        return st.fisher_g_p(x) > ABSENT
    if kind == "shifting":
        half = int(0.45 * n)
        early, late = st.dominant_period(x[:half]), st.dominant_period(x[-half:])
        ratio = late / early
        return ratio > 1.25 if labels["period_trend"] == "increasing" else ratio < 1 / 1.25
    if st.fisher_g_p(x) > CLEAR:
        return False
    power = st.periodogram(x)
    if kind == "multiple":
        peaks = st.local_peaks(power, 2)
        wanted = sorted(labels["periods"], reverse=True)  # longest period = lowest bin
        return all(k in st.nearest_bins(n, p, slack=1) for k, p in zip(peaks, wanted, strict=True))
    if int(np.argmax(power)) + 1 not in st.nearest_bins(n, labels["period"]):
        return False
    if kind == "varying_amplitude":
        ratio = _thirds_ratio(x)
        return ratio > 1.5 if labels["amplitude_trend"] == "increasing" else ratio < 1 / 1.5
    return True


def anomaly(x: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    if kind == "level_shift":
        cut, diff = st.best_mean_split(x)
        return abs(cut - labels["start"]) <= 1 and np.sign(diff) == np.sign(labels["shift"])
    if kind == "contextual":
        index = labels["anomaly_indices"][0]
        z = st.robust_z(st.sinusoid_residual(x))
        others = np.delete(np.abs(z), index)
        # the odd point stands out from the cycle, but not from the values as a whole
        plain = np.abs(st.robust_z(x)[index])
        inside = float(np.mean(np.abs(x - np.median(x)) > abs(x[index] - np.median(x))))
        return abs(z[index]) > 6 and others.max() < 4 and plain < 2.5 and inside > 0.05
    z = st.robust_z(x)
    wanted = labels["anomaly_indices"]
    clear = np.flatnonzero(np.abs(z) > 6).tolist()
    borderline = np.flatnonzero(np.abs(z) > 4).tolist()
    if clear != wanted or borderline != wanted:
        return False
    if kind == "spike":
        return bool(np.all(np.sign(z[wanted]) == np.sign(labels["magnitudes"])))
    if kind == "step":
        return bool(np.all(np.sign(z[wanted]) == np.sign(labels["shift"])))
    return True


def volatility(r: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    p_time, slope = st.variance_time_p(r)
    ratio = _thirds_ratio(r)
    if kind == "constant":
        return (st.arch_lm_p(r) > ABSENT and st.ljung_box_p(np.abs(r - r.mean())) > ABSENT
                and p_time > ABSENT and 2 / 3 < ratio < 3 / 2)
    if kind == "increasing":
        return p_time < CLEAR and slope > 0 and ratio > 2.5
    # clustered: calm and turbulent stretches that come and go, not one drift of the level
    if not (st.ljung_box_p(np.abs(r - r.mean())) < 1e-3 and 1 / 2 < ratio < 2 and p_time > 1e-3):
        return False
    if kind == "clustered":
        return True
    # leverage: squared returns are larger after falls than after rises
    return float(stats.spearmanr(r[:-1], r[1:] ** 2)[0]) < -0.1


def structural_break(x: np.ndarray, labels: dict) -> bool:
    kind, n = labels["kind"], x.size
    if kind == "none":
        _, diff = st.best_mean_split(x)
        _, ratio = st.best_variance_split(x)
        slope, p = st.slope_p(x)
        return abs(diff) < 1.0 * x.std() and 1 / 2**2 < ratio < 2**2 and p > ABSENT
    b = labels["break_index"]
    if kind == "level":
        cut, diff = st.best_mean_split(x)
        return abs(cut - b) <= 1 and np.sign(diff) == np.sign(labels["level_after"] - labels["level_before"])
    if kind == "trend":
        knot, before, after = st.best_hinge(x)
        turn = np.sign(labels["slope_after"] - labels["slope_before"])
        return abs(knot - b) <= max(2, 0.03 * n) and np.sign(after - before) == turn
    cut, ratio = st.best_variance_split(x)
    wanted = labels["sigma_after"] > labels["sigma_before"]
    return abs(cut - b) <= 0.05 * n and (ratio > 2 if wanted else ratio < 1 / 2)


def stationarity(x: np.ndarray, labels: dict) -> bool:
    kind = labels["kind"]
    if kind == "random_walk":
        t_c, used = st.adf_t(x, "c")
        t_ct, _ = st.adf_t(x, "ct")
        return t_c > st.adf_critical(0.05, used, "c") and t_ct > st.adf_critical(0.05, used, "ct")
    if kind == "stationary":
        t_c, used = st.adf_t(x, "c")
        return t_c < st.adf_critical(0.01, used, "c") - 1.2  # about p < 1e-4
    t_ct, used = st.adf_t(x, "ct")
    slope, p = st.slope_p(x)
    return t_ct < st.adf_critical(0.01, used, "ct") - 1.2 and p < CLEAR and np.sign(slope) == np.sign(labels["slope"])


def fat_tails(x: np.ndarray, labels: dict) -> bool:
    kurtosis = float(stats.kurtosis(x))
    return kurtosis > 2.0 if labels["fat_tailed"] else kurtosis < 0.5


def correlated_pair(v: np.ndarray, labels: dict) -> bool:
    r, p = st.pearson(v[:, 0], v[:, 1])
    if labels["kind"] == "none":
        return p > ABSENT
    close = abs(np.arctanh(r) - np.arctanh(labels["rho"])) < 3 / np.sqrt(v.shape[0] - 3)
    return p < CLEAR and np.sign(r) == np.sign(labels["rho"]) and close


def lagged_pair(v: np.ndarray, labels: dict) -> bool:
    ccf = st.cross_correlation(v[:, 0], v[:, 1], max_lag=20)
    ranked = sorted(ccf, key=lambda k: abs(ccf[k]), reverse=True)
    peak, runner_up = ranked[0], ranked[1]
    return (peak == labels["lag"] and np.sign(ccf[peak]) == np.sign(labels["rho"])
            and abs(ccf[peak]) - abs(ccf[runner_up]) > 0.05)


def _correlation_class(r: float) -> str | None:
    """"positive" / "negative" / "none", or None in the grey zone between them."""
    if r > 0.55:
        return "positive"
    if r < -0.55:
        return "negative"
    return "none" if abs(r) < 0.25 else None


def dcc_pair(v: np.ndarray, labels: dict) -> bool:
    n = v.shape[0]
    edge = int(0.3 * n)
    x, y = v[:, 0], v[:, 1]
    before = _correlation_class(float(np.corrcoef(x[:edge], y[:edge])[0, 1]))
    after = _correlation_class(float(np.corrcoef(x[-edge:], y[-edge:])[0, 1]))
    wanted = [_correlation_class(labels["rho_before"]), _correlation_class(labels["rho_after"])]
    window = max(10, int(0.15 * n))
    rolling = st.rolling_correlation(x, y, window)
    cut, _ = st.best_mean_split(rolling, margin=0.05)
    change = cut + window - 1 - window // 2
    return [before, after] == wanted and abs(change - labels["change_index"]) <= 0.07 * n


def granger_pair(v: np.ndarray, labels: dict) -> bool:
    x, y, lag = v[:, 0], v[:, 1], labels["lag"]

    def causes(a: np.ndarray, b: np.ndarray) -> bool:
        return st.granger_p(a, b, lag) < CLEAR

    def no_cause(a: np.ndarray, b: np.ndarray) -> bool:  # at no lag up to 5, nor the labelled one
        return min(st.granger_p(a, b, k) for k in {1, 2, 3, 4, 5, lag}) > 0.01

    direction = labels["direction"]
    if direction == "x->y":
        return causes(x, y) and no_cause(y, x)
    if direction == "y->x":
        return causes(y, x) and no_cause(x, y)
    return no_cause(x, y) and no_cause(y, x)


def ar(x: np.ndarray, labels: dict) -> bool:
    """The fitted AR coefficients lie within 3 standard errors of the labelled ones."""
    q = labels["order"]
    y = x[q:]
    design = np.column_stack([np.ones(y.size)] + [x[q - k : x.size - k] for k in range(1, q + 1)])
    coef, se, _ = st.ols(y, design)
    return bool(np.all(np.abs(coef[1:] - np.array(labels["coefficients"])) < 3 * se[1:]))


def ma(x: np.ndarray, labels: dict) -> bool:
    """The fitted MA coefficients lie within 3 standard errors of the labelled ones."""
    theta, se = st.ma_fit(x, labels["order"])
    return bool(np.all(np.abs(theta - np.array(labels["coefficients"])) < 3 * se))


def white_noise(x: np.ndarray, labels: dict) -> bool:
    return st.ljung_box_p(x, 10) > ABSENT


def random_walk(x: np.ndarray, labels: dict) -> bool:
    t_c, used = st.adf_t(x, "c")
    return t_c > st.adf_critical(0.05, used, "c") and st.ljung_box_p(np.diff(x), 10) > ABSENT
