"""The synthetic feature templates (templates_bank/curated/features), run through the sandbox.

The feature families of Fons et al. (trend, seasonality, anomalies, volatility, structural breaks,
stationarity, fat tails, correlation, cross-correlation, dynamic correlation) and task kinds
(detection, classification, retrieval, arithmetic, description matching). Each template runs
for 3 seeds x 5 samples (plus a repeat of seed 0); every item must validate. The keyed answer
is then recomputed on a larger run from the attached series alone with standard statistics the
templates do not use (regression t-tests, Fisher's g and least-squares model selection by BIC,
rolling medians and robust z-scores, ADF, Ljung-Box, GJR-GARCH maximum likelihood, kurtosis,
Pearson and cross-correlation, Fisher-z split scans, ...) on a separate run of 50 items per
template, and must agree on at least 98% of them.
"""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, signal, stats

from itemsmith.items.schema import Item
from itemsmith.templates_bank.curated import CURATED_DIR, load_curated

try:  # the ADF test comes from statsmodels (the 'dev' extra); only the stationarity checks need it
    from statsmodels.tsa.stattools import adfuller
except ImportError:  # pragma: no cover - dev installs have it
    adfuller = None

try:
    from itemsmith.sandbox import run_template
except ImportError:  # the package may not re-export it
    from itemsmith.sandbox.executor import run_template

FEATURES_DIR = CURATED_DIR / "features"
MANIFEST = tomllib.loads((FEATURES_DIR / "manifest.toml").read_text())["template"]
TEMPLATES = {Path(entry["file"]).stem: entry for entry in MANIFEST}
SEEDS = (0, 1, 2)
SAMPLES = 5
CHECK_SAMPLES = 50
CHECK_SEED = 7
MAX_POINTS = 4000
FAMILIES = ("trend", "seasonality", "anomaly", "volatility", "structural_break", "stationarity", "fat_tails",
            "correlation", "cross_correlation", "dynamic_correlation")
TASK_KINDS = ("detection", "classification", "retrieval", "arithmetic", "description_matching")


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, int | str], object]:
    """(template id, seed) -> RunResult; ("id", "repeat") reruns seed 0, ("id", "check") is the
    larger run the independent checks use."""
    out = {}
    for template_id, entry in TEMPLATES.items():
        source = (FEATURES_DIR / entry["file"]).read_text()
        for seed in SEEDS:
            out[template_id, seed] = run_template(source, "synthetic", num_samples=SAMPLES, seed=seed)
        out[template_id, "repeat"] = run_template(source, "synthetic", num_samples=SAMPLES, seed=SEEDS[0])
        out[template_id, "check"] = run_template(source, "synthetic", num_samples=CHECK_SAMPLES, seed=CHECK_SEED)
    return out


# --- the bank ------------------------------------------------------------------------------------


def test_manifest_lists_every_file_and_covers_every_family_and_task_kind():
    files = sorted(p.name for p in FEATURES_DIR.glob("*.py"))
    assert files == sorted(entry["file"] for entry in MANIFEST)
    assert len(TEMPLATES) >= 16
    assert all(t.startswith("feat_") for t in TEMPLATES)
    concepts = Counter(c for entry in MANIFEST for c in entry["concepts"])
    for family in FAMILIES:
        assert concepts[family] >= 2, f"{family}: {concepts[family]} templates"
    kinds = Counter(entry["concepts"][-1] for entry in MANIFEST)
    for kind in TASK_KINDS:
        assert kinds[kind] >= 2, f"{kind}: {kinds[kind]} templates"
    loaded = load_curated()
    for template_id, entry in TEMPLATES.items():
        assert entry["handler"] == "synthetic"
        assert loaded[template_id].handler == "synthetic"
        assert loaded[template_id].category == entry["category"]


def test_every_template_has_an_independent_check():
    assert set(TEMPLATES) == set(CHECKS)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_runs_ok_and_items_are_well_formed(runs, template_id):
    for key in (*SEEDS, "check"):
        result = runs[template_id, key]
        assert result.status.value == "ok", f"run {key}: {result.error}\n{result.traceback_tail}"
        assert len(result.items) == (CHECK_SAMPLES if key == "check" else SAMPLES)
        for raw in result.items:
            item = Item.model_validate(raw)
            if item.kind.value == "tf":
                assert item.options == ["True", "False"]
            else:
                assert 3 <= len(item.options) <= 5
            assert item.rationale and item.metadata.get("generator") and "labels" in item.metadata
            json.dumps(item.metadata)
            assert item.series and sum(len(s.values) for s in item.series) <= MAX_POINTS
            assert all(60 <= len(s.values) <= 300 for s in item.series)
            if re.search(r"\d{4}-\d{2}-\d{2}", item.question):
                assert all(s.timestamps for s in item.series), "a question naming dates needs dated series"


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_same_seed_same_items_and_seeds_differ(runs, template_id):
    assert runs[template_id, "repeat"].items == runs[template_id, SEEDS[0]].items
    dumps = [json.dumps(runs[template_id, seed].items, sort_keys=True) for seed in SEEDS]
    assert len(set(dumps)) == len(SEEDS)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_keyed_answers_agree_with_an_independent_computation(runs, template_id):
    if adfuller is None and "stationarity" in TEMPLATES[template_id]["concepts"]:
        pytest.skip("the stationarity checks need statsmodels' ADF test (the 'dev' extra)")
    items = runs[template_id, "check"].items
    assert len(items) == CHECK_SAMPLES
    verdicts = [bool(CHECKS[template_id](item)) for item in items]
    agreement = sum(verdicts) / len(verdicts)
    wrong = [items[i]["question"][:90] for i, ok in enumerate(verdicts) if not ok][:3]
    assert agreement >= 0.98, f"{template_id}: agreement {agreement:.0%}; e.g. {wrong}"


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_answers_are_spread_over_options(runs, template_id):
    """Not always the same option position, and true/false items keyed both ways."""
    items = runs[template_id, "check"].items
    positions = Counter(item["answer_index"] for item in items)
    assert len(positions) >= 2
    assert max(positions.values()) <= 0.75 * len(items)


# --- statistics used by the checks ----------------------------------------------------------


def keyed(item: dict) -> str:
    return item["options"][item["answer_index"]]


def chan(item: dict, name: str | None = None) -> dict:
    for s in item["series"]:
        if name is None or s["name"] == name:
            return s
    raise KeyError(name)


def values(s: dict) -> np.ndarray:
    return np.asarray(s["values"], dtype=float)


def says_true(item: dict) -> bool:
    return keyed(item) == "True"


def trend_test(x: np.ndarray) -> tuple[float, float]:
    """(OLS slope, its two-sided p-value) of x on time."""
    fit = stats.linregress(np.arange(len(x)), x)
    return float(fit.slope), float(fit.pvalue)


def trend_size(x: np.ndarray) -> float:
    """Total change of the OLS line over the series, in residual standard deviations (signed)."""
    t = np.arange(len(x))
    line = np.polyval(np.polyfit(t, x, 1), t)
    return float((line[-1] - line[0]) / np.std(x - line))


def quadratic_t(x: np.ndarray) -> float:
    """t statistic of the quadratic coefficient of an OLS fit a + b u + c u**2 (u = 0..1)."""
    u = np.linspace(0.0, 1.0, len(x))
    design = np.column_stack([np.ones_like(u), u, u**2])
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    resid = x - design @ coef
    s2 = resid @ resid / (len(x) - 3)
    cov = s2 * np.linalg.inv(design.T @ design)
    return float(coef[2] / np.sqrt(cov[2, 2]))


def trend_kind(x: np.ndarray) -> tuple[str, bool]:
    """(direction, accelerating): no trend unless the OLS slope has p < 1e-4; accelerating when the
    quadratic term's t statistic exceeds 4 with the slope's sign."""
    slope, p = trend_test(x)
    if p >= 1e-4:
        return ("none", False)
    tq = quadratic_t(x)
    return ("up" if slope > 0 else "down", bool(abs(tq) > 4 and np.sign(tq) == np.sign(slope)))


def detrended(x: np.ndarray) -> np.ndarray:
    t = np.arange(len(x))
    return x - np.polyval(np.polyfit(t, x, 1), t)


def fisher_g_pvalue(x: np.ndarray) -> float:
    """Fisher's g test for a hidden periodicity on the linearly detrended series (upper bound
    m (1 - g)**(m - 1) of the p-value), over frequencies 2/n .. 0.5."""
    freqs, power = signal.periodogram(detrended(x))
    power = power[(freqs >= 2.0 / len(x)) & (freqs < 0.5)]
    g = power.max() / power.sum()
    m = len(power)
    return float(min(1.0, m * (1.0 - g) ** (m - 1)))


def bic(rss: float, n: int, k: int) -> float:
    return n * np.log(rss / n) + k * np.log(n)


def ls_rss(columns: list[np.ndarray], x: np.ndarray) -> float:
    design = np.column_stack([np.ones_like(x)] + columns)
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    resid = x - design @ coef
    return float(resid @ resid)


def waves(phase: np.ndarray, envelope: np.ndarray | None = None) -> list[np.ndarray]:
    cols = [np.sin(phase), np.cos(phase)]
    if envelope is not None:
        cols += [envelope * c for c in cols]
    return cols


def peak_frequency(x: np.ndarray) -> float:
    """Frequency (cycles per step) of the zero-padded periodogram's peak, 2/n .. 0.5."""
    freqs, power = signal.periodogram(detrended(x), nfft=8 * len(x))
    ok = freqs >= 2.0 / len(x)
    return float(freqs[ok][np.argmax(power[ok])])


def seasonal_scores(x: np.ndarray) -> dict[str, float]:
    """BIC of least-squares fits: constant ("none"), a fixed sinusoid, a sinusoid with a linear
    envelope, two sinusoids, a linear chirp; frequencies start at periodogram peaks and are refined
    by Nelder-Mead, and each searched frequency counts as 4 parameters."""
    n = len(x)
    t = np.arange(n, dtype=float)
    u = t / (n - 1)

    def fit(rss_of, start):
        res = optimize.minimize(rss_of, np.atleast_1d(start), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 400})
        return float(res.fun), res.x

    f1 = peak_frequency(x)
    rss_fixed, (f1,) = fit(lambda p: ls_rss(waves(2 * np.pi * p[0] * t), x), f1)
    design = np.column_stack([np.ones(n)] + waves(2 * np.pi * f1 * t))
    resid = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    f2 = peak_frequency(resid)
    rss_multi, _ = fit(lambda p: ls_rss(waves(2 * np.pi * p[0] * t) + waves(2 * np.pi * p[1] * t), x), [f1, f2])
    rss_vary, _ = fit(lambda p: ls_rss(waves(2 * np.pi * p[0] * t, u), x), f1)
    half = n // 2
    g1, g2 = peak_frequency(x[:half]), peak_frequency(x[half:])
    rss_chirp = min(
        fit(lambda p: ls_rss(waves(2 * np.pi * (p[0] * t + (p[1] - p[0]) * t**2 / (2 * (n - 1)))), x), start)[0]
        for start in ([(3 * g1 - g2) / 2, (3 * g2 - g1) / 2], [f1, f1]))
    return {
        "none": bic(float(np.sum((x - x.mean()) ** 2)), n, 2),
        "fixed": bic(rss_fixed, n, 7),
        "varying_amplitude": bic(rss_vary, n, 9),
        "multiple": bic(rss_multi, n, 13),
        "shifting": bic(rss_chirp, n, 11),
    }


def seasonal_kind(x: np.ndarray) -> str:
    """"none" unless a seasonal model beats the constant by 30 BIC; a model richer than the fixed
    sinusoid must beat it by 10."""
    scores = seasonal_scores(x)
    if min(v for k, v in scores.items() if k != "none") > scores["none"] - 30:
        return "none"
    richer = {k: scores[k] for k in ("varying_amplitude", "multiple", "shifting")}
    best = min(richer, key=richer.get)
    return best if richer[best] < scores["fixed"] - 10 else "fixed"


def seasonality_present(x: np.ndarray) -> bool:
    """Fisher's g (p < 0.001) or, for drifting periods, a seasonal model that beats a constant by 30 BIC."""
    return fisher_g_pvalue(x) < 1e-3 or seasonal_kind(x) != "none"


def noise_sd(x: np.ndarray) -> float:
    """Robust noise level: MAD of the first differences, scaled to a Gaussian sd of one reading."""
    d = np.diff(x)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2))


def rolling_median(x: np.ndarray, width: int) -> np.ndarray:
    return signal.medfilt(x, width)


def point_outlier_z(x: np.ndarray) -> np.ndarray:
    """|x - 7-point rolling median| in robust noise sd (edges excluded)."""
    z = np.abs(x - rolling_median(x, 7)) / noise_sd(x)
    z[:3] = z[-3:] = 0
    return z


def window_shift_z(x: np.ndarray, w: int = 10) -> float:
    """Largest difference of the means of adjacent w-point windows, in standard errors."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    means = (c[w:] - c[:-w]) / w
    diffs = np.abs(means[w:] - means[:-w])
    return float(diffs.max() / (noise_sd(x) * np.sqrt(2.0 / w)))


def acf(x: np.ndarray, max_lag: int) -> np.ndarray:
    y = x - x.mean()
    return np.array([y[:-k] @ y[k:] / (y @ y) for k in range(1, max_lag + 1)])


def anomaly_kind(x: np.ndarray) -> str:
    """Drop-out = a run of exact zeros; contextual = strongly oscillating autocorrelation; level
    shift = the medians of the first and last 15% differ by 3 noise sd; step = a run of 3+ readings
    5 robust sd from the median; spike = isolated such readings; none otherwise."""
    n = len(x)
    zero = (x == 0).astype(int)
    if np.convolve(zero, np.ones(3), "valid").max() >= 3:
        return "dropout"
    if acf(x, n // 4).min() < -0.5:
        return "contextual"
    sd = noise_sd(x)
    edge = max(5, int(0.15 * n))
    if abs(np.median(x[-edge:]) - np.median(x[:edge])) > 3 * sd:
        return "level_shift"
    far = (np.abs(x - np.median(x)) / sd > 5).astype(int)
    if not far.any():
        return "none"
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], far, [0]]))))[::2]
    return "step" if runs.max() >= 3 else "spike"


def ljung_box_pvalue(x: np.ndarray, lags: int = 10) -> float:
    """Ljung-Box portmanteau test of x's first `lags` autocorrelations (chi-square, `lags` df)."""
    n = len(x)
    rho = acf(x, lags)
    q = n * (n + 2) * float(np.sum(rho**2 / (n - np.arange(1, lags + 1))))
    return float(stats.chi2.sf(q, lags))


def gjr_fit(r: np.ndarray) -> dict[str, float]:
    """Gaussian maximum likelihood of GJR-GARCH(1,1): var_t = w + (a + g [r_{t-1} < 0]) r_{t-1}**2
    + b var_{t-1}, var_0 = sample variance; best of two starts. Also returns the minimized nll."""
    v0 = float(np.var(r))
    sq = r**2
    neg = (r < 0).astype(float)

    def nll(p):
        w, a, g, b = p
        drive = np.concatenate([[v0], w + (a + g * neg[:-1]) * sq[:-1]])
        var = np.maximum(signal.lfilter([1.0], [1.0, -b], drive), 1e-12)
        return 0.5 * float(np.sum(np.log(var) + sq / var))

    bounds = [(1e-6 * v0, 10 * v0), (0.0, 1.0), (0.0, 2.0), (0.0, 0.999)]
    best = min((optimize.minimize(nll, x0, bounds=bounds, method="L-BFGS-B")
                for x0 in ([0.05 * v0, 0.1, 0.1, 0.8], [0.05 * v0, 0.02, 0.5, 0.6])), key=lambda res: res.fun)
    return {**dict(zip(("omega", "alpha", "gamma", "beta"), best.x, strict=True)), "nll": float(best.fun)}


def linear_sd_nll(r: np.ndarray) -> float:
    """Gaussian nll (up to the same constant as gjr_fit) when the sd is linear in time, sd_t = c0 + c1 u."""
    sq = r**2
    u = np.linspace(0.0, 1.0, len(r))
    sd0 = float(np.std(r))

    def nll(p):
        var = np.maximum(p[0] + p[1] * u, 1e-3 * sd0) ** 2
        return 0.5 * float(np.sum(np.log(var) + sq / var))

    return float(optimize.minimize(nll, [sd0, 0.0], method="Nelder-Mead").fun)


def leverage_present(r: np.ndarray) -> bool:
    fit = gjr_fit(r)
    return fit["gamma"] - fit["alpha"] > 0.2


def volatility_kind(r: np.ndarray) -> str:
    """Maximum-likelihood model selection by BIC among constant variance (1 parameter), a standard
    deviation linear in time (2, and it must win by 10 nll units) and GJR-GARCH(1,1) (4); a GJR
    winner is "leverage" when its asymmetry gamma - alpha exceeds 0.2, else "clustered"."""
    n = len(r)
    fit = gjr_fit(r)
    scores = {
        "constant": 0.5 * n * (np.log(np.mean(r**2)) + 1) + 0.5 * np.log(n),
        "increasing": linear_sd_nll(r) + np.log(n) + 10,
        "garch": fit["nll"] + 2 * np.log(n),
    }
    best = min(scores, key=scores.get)
    if best != "garch":
        return best
    return "leverage" if fit["gamma"] - fit["alpha"] > 0.2 else "clustered"


def break_fits(x: np.ndarray) -> dict[str, tuple[float, int]]:
    """(BIC, best split) of: no break (constant), a line, a mean jump, a continuous slope change
    (hinge) and a variance change around one mean; splits searched over 10-90% of the series, a
    searched split costing 3 parameters."""
    n = len(x)
    t = np.arange(n, dtype=float)
    ks = np.arange(int(0.1 * n), int(0.9 * n))
    c1 = np.concatenate([[0.0], np.cumsum(x)])
    c2 = np.concatenate([[0.0], np.cumsum(x**2)])
    left = c2[ks] - c1[ks] ** 2 / ks
    right = (c2[n] - c2[ks]) - (c1[n] - c1[ks]) ** 2 / (n - ks)
    rss_level = left + right
    rss_hinge = np.array([ls_rss([t, np.maximum(t - k, 0.0)], x) for k in ks])
    dev2 = np.concatenate([[0.0], np.cumsum((x - x.mean()) ** 2)])
    var_l, var_r = dev2[ks] / ks, (dev2[n] - dev2[ks]) / (n - ks)
    nll_var = ks * np.log(var_l) + (n - ks) * np.log(var_r)
    i_level, i_hinge, i_var = int(np.argmin(rss_level)), int(np.argmin(rss_hinge)), int(np.argmin(nll_var))
    return {
        "none": (bic(float(dev2[n]), n, 2), -1),
        "line": (bic(ls_rss([t], x), n, 3), -1),
        "level": (bic(float(rss_level[i_level]), n, 7), int(ks[i_level])),
        "trend": (bic(float(rss_hinge[i_hinge]), n, 8), int(ks[i_hinge])),
        "variance": (float(nll_var[i_var]) + 7 * np.log(n), int(ks[i_var])),
    }


def break_kind(x: np.ndarray) -> tuple[str, int]:
    """The best break model and its split, or ("none", -1) unless it beats no-break by 10 BIC."""
    fits = break_fits(x)
    best = min(("level", "trend", "variance"), key=lambda k: fits[k][0])
    if fits[best][0] < min(fits["none"][0], fits["line"][0]) - 10:
        return best, fits[best][1]
    return "none", -1


def nearest_date_option(options: list[str], timestamps: list[str], index: int) -> str:
    where = {o: timestamps.index(o) for o in options}
    return min(options, key=lambda o: abs(where[o] - index))


def adf_pvalue(x: np.ndarray) -> float:
    """Augmented Dickey-Fuller test with constant and trend, lags chosen by BIC (p-values beyond
    MacKinnon's table are clipped, hence the silenced warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(adfuller(x, regression="ct", autolag="BIC")[1])


def stationarity_kind(x: np.ndarray) -> str:
    """ADF (p < 0.01) rejects a unit root; then an OLS trend whose fitted total change exceeds 5
    residual sd separates trend-stationary from stationary."""
    if adf_pvalue(x) >= 0.01:
        return "random_walk"
    return "trend_stationary" if abs(trend_size(x)) > 5 else "stationary"


def excess_kurtosis(x: np.ndarray) -> float:
    return float(stats.kurtosis(x, fisher=True))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.pearsonr(x, y)[0])


def cross_correlation_peak(x: np.ndarray, y: np.ndarray, max_lag: int = 15) -> tuple[int, float]:
    """(k, corr) maximizing |corr(x[t - k], y[t])| over k = -max_lag..max_lag."""
    best = (0, 0.0)
    for k in range(-max_lag, max_lag + 1):
        c = pearson(x[:len(x) - k], y[k:]) if k >= 0 else pearson(x[-k:], y[:len(y) + k])
        if abs(c) > abs(best[1]):
            best = (k, c)
    return best


def correlation_switch(x: np.ndarray, y: np.ndarray) -> int:
    """Split maximizing the Fisher-z difference of the two sides' Pearson correlations (10-90% of
    the series), from cumulative sums."""
    n = len(x)
    ks = np.arange(int(0.1 * n), int(0.9 * n))

    def corr(sx, sy, sxx, syy, sxy, m):
        cov = sxy - sx * sy / m
        return cov / np.sqrt((sxx - sx**2 / m) * (syy - sy**2 / m))

    sums = [np.concatenate([[0.0], np.cumsum(v)]) for v in (x, y, x * x, y * y, x * y)]
    left = corr(*(c[ks] for c in sums), ks)
    right = corr(*(c[n] - c[ks] for c in sums), n - ks)
    stat = np.abs(np.arctanh(left) - np.arctanh(right)) / np.sqrt(1 / (ks - 3) + 1 / (n - ks - 3))
    return int(ks[int(np.argmax(stat))])

# --- independent checks, one per template ------------------------------------------------------


def check_feat_trend_detect_tf(item):
    _, p = trend_test(values(chan(item)))
    claims_trend = "has no trend" not in item["question"] and "no sustained" not in item["question"]
    return says_true(item) == ((p < 1e-4) == claims_trend)


TREND_KEYS = {"rising at a steady": ("up", False), "steepens over time (accelerating rise)": ("up", True),
              "falling at a steady": ("down", False), "steepens over time (accelerating fall)": ("down", True),
              "No trend": ("none", False)}


def check_feat_trend_classify(item):
    want = next(v for k, v in TREND_KEYS.items() if k in keyed(item))
    return trend_kind(values(chan(item))) == want


def check_feat_seasonality_detect_tf(item):
    claims = "has no seasonality" not in item["question"] and "no repeating cycle" not in item["question"]
    return says_true(item) == (seasonality_present(values(chan(item))) == claims)


SEASONAL_KEYS = {"fixed period and a constant": "fixed", "amplitude steadily": "varying_amplitude",
                 "period drifts": "shifting", "Two overlapping": "multiple", "No seasonality": "none"}


def check_feat_seasonality_classify(item):
    want = next(v for k, v in SEASONAL_KEYS.items() if k in keyed(item))
    return seasonal_kind(values(chan(item))) == want


def check_feat_anomaly_detect_tf(item):
    x = values(chan(item))
    found = bool(point_outlier_z(x).max() > 6 or window_shift_z(x) > 6)
    claims = "has no anomalies" not in item["question"] and "Nothing unusual" not in item["question"]
    return says_true(item) == (found == claims)


ANOMALY_KEYS = {"isolated spikes": "spike", "level shift": "level_shift", "temporary plateau": "step",
                "drop-out": "dropout", "contextual anomaly": "contextual"}


def check_feat_anomaly_classify(item):
    want = next(v for k, v in ANOMALY_KEYS.items() if k in keyed(item))
    return anomaly_kind(values(chan(item))) == want


def check_feat_anomaly_date(item):
    s = chan(item)
    return keyed(item) == s["timestamps"][int(np.argmax(point_outlier_z(values(s))))]


def check_feat_volatility_clustering_tf(item):
    found = ljung_box_pvalue(np.abs(values(chan(item)))) < 1e-5
    claims = "have constant volatility" not in item["question"] and "no volatility clustering" not in item["question"]
    return says_true(item) == (found == claims)


def check_feat_volatility_leverage_tf(item):
    claims = "about equally" not in item["question"] and "similar turbulence" not in item["question"]
    return says_true(item) == (leverage_present(values(chan(item))) == claims)


VOLATILITY_KEYS = {"Constant volatility": "constant", "Increasing volatility": "increasing",
                   "as much as large falls": "clustered", "leverage effect": "leverage"}


def check_feat_volatility_classify(item):
    want = next(v for k, v in VOLATILITY_KEYS.items() if k in keyed(item))
    return volatility_kind(values(chan(item))) == want


def check_feat_break_detect_tf(item):
    found = break_kind(values(chan(item)))[0] != "none"
    claims = "no structural break" not in item["question"] and "one and the same regime" not in item["question"]
    return says_true(item) == (found == claims)


BREAK_KEYS = {"jump in the mean": "level", "change of slope": "trend", "change of variance": "variance",
              "No structural break": "none"}


def check_feat_break_classify(item):
    want = next(v for k, v in BREAK_KEYS.items() if k in keyed(item))
    return break_kind(values(chan(item)))[0] == want


def check_feat_break_date(item):
    s = chan(item)
    kind, split = break_kind(values(s))
    return kind != "none" and keyed(item) == nearest_date_option(item["options"], s["timestamps"], split)


def check_feat_stationarity_tf(item):
    found = stationarity_kind(values(chan(item))) == "stationary"
    claims = "non-stationary" not in item["question"]
    return says_true(item) == (found == claims)


STATIONARITY_KEYS = {"Stationary:": "stationary", "random walk": "random_walk", "Trend-stationary": "trend_stationary"}


def check_feat_stationarity_classify(item):
    want = next(v for k, v in STATIONARITY_KEYS.items() if k in keyed(item))
    return stationarity_kind(values(chan(item))) == want


def check_feat_fat_tails_tf(item):
    found = excess_kurtosis(values(chan(item))) > 1.5
    claims = "no fat tails" not in item["question"] and "rather than fat tails" not in item["question"]
    return says_true(item) == (found == claims)


def check_feat_fat_tails_which(item):
    k = {s["name"]: excess_kurtosis(values(s)) for s in item["series"]}
    return keyed(item) == max(k, key=k.get)


def check_feat_correlation_classify(item):
    r = pearson(values(item["series"][0]), values(item["series"][1]))
    found = "positive" if r > 0.4 else "negative" if r < -0.4 else "none" if abs(r) < 0.25 else "unclear"
    return keyed(item).startswith({"positive": "Positively", "negative": "Negatively", "none": "Uncorrelated"}.get(
        found, "?"))


def check_feat_correlation_tf(item):
    r = pearson(values(item["series"][0]), values(item["series"][1]))
    found = "positive" if r > 0.4 else "negative" if r < -0.4 else "none" if abs(r) < 0.25 else "unclear"
    stated = next(k for k in ("positive", "negative", "uncorrelated") if f"are {k}" in item["question"])
    return says_true(item) == ({"uncorrelated": "none"}.get(stated, stated) == found)


def check_feat_cross_corr_classify(item):
    k, c = cross_correlation_peak(values(chan(item, "x")), values(chan(item, "y")))
    head = ("Positive" if c > 0 else "Negative") + (", lagged" if k != 0 else ", same-time")
    return k >= 0 and keyed(item).startswith(head)


def check_feat_cross_corr_lag(item):
    k, _ = cross_correlation_peak(values(chan(item, "x")), values(chan(item, "y")))
    return int(keyed(item).split()[0]) == k


def dcc_regime(r: float) -> str:
    return "positive" if r > 0.5 else "negative" if r < -0.5 else "none"


DCC_KINDS = {("positive", "negative"): "Positively correlated in the first part",
             ("negative", "positive"): "Negatively correlated in the first part",
             ("positive", "none"): "Strongly correlated in the first part",
             ("negative", "none"): "Strongly correlated in the first part",
             ("none", "positive"): "Unrelated in the first part",
             ("none", "negative"): "Unrelated in the first part"}


def check_feat_dcc_classify(item):
    x, y = values(chan(item, "x")), values(chan(item, "y"))
    m = int(0.3 * len(x))
    regimes = (dcc_regime(pearson(x[:m], y[:m])), dcc_regime(pearson(x[-m:], y[-m:])))
    return regimes in DCC_KINDS and keyed(item).startswith(DCC_KINDS[regimes])


def check_feat_dcc_change_date(item):
    sx = chan(item, "x")
    split = correlation_switch(values(sx), values(chan(item, "y")))
    return keyed(item) == nearest_date_option(item["options"], sx["timestamps"], split)


def date_in_question(item: dict) -> str:
    return re.findall(r"\d{4}-\d{2}-\d{2}", item["question"])[-1]


def check_feat_value_on_date(item):
    s = chan(item)
    value = values(s)[s["timestamps"].index(date_in_question(item))]
    others = [float(o) for o in item["options"] if o != keyed(item)]
    return abs(float(keyed(item)) - value) < 0.005 and min(abs(o - value) for o in others) >= 0.01


def check_feat_extreme_value(item):
    x = values(chan(item))
    target = x.max() if "maximum" in item["question"] else x.min()
    return abs(float(keyed(item)) - target) < 0.005


def check_feat_extreme_date(item):
    s = chan(item)
    x = values(s)
    return keyed(item) == s["timestamps"][int(np.argmax(x) if "highest" in item["question"] else np.argmin(x))]


SAME_FAMILY_KINDS = [
    ("steady (linear) upward", ("trend", ("up", False))), ("accelerating (quadratic) upward", ("trend", ("up", True))),
    ("accelerating (exponential) upward", ("trend", ("up", True))),
    ("steady (linear) downward", ("trend", ("down", False))),
    ("accelerating (quadratic) downward", ("trend", ("down", True))),
    ("accelerating (exponential) downward", ("trend", ("down", True))),
    ("no trend", ("trend", ("none", False))),
    ("fixed seasonal cycle", ("seasonality", "fixed")), ("whose amplitude", ("seasonality", "varying_amplitude")),
    ("whose period drifts", ("seasonality", "shifting")), ("two seasonal cycles", ("seasonality", "multiple")),
    ("no seasonality", ("seasonality", "none")),
    ("isolated spike", ("anomaly", "spike")), ("level shifts", ("anomaly", "level_shift")),
    ("temporary plateau", ("anomaly", "step")), ("reads 0", ("anomaly", "dropout")),
    ("out-of-place reading", ("anomaly", "contextual")), ("no anomalies", ("anomaly", "none")),
    ("mean jumps", ("structural_break", "level")), ("trend bends", ("structural_break", "trend")),
    ("fluctuations become", ("structural_break", "variance")), ("with no break", ("structural_break", "none")),
]


FAMILY_CLASSIFIERS = {
    "trend": trend_kind,
    "seasonality": seasonal_kind,
    "anomaly": anomaly_kind,
    "structural_break": lambda x: break_kind(x)[0],
}


def check_feat_describe_same_family(item):
    """No option states a value range (min/max alone would pick the key); every option describes
    a different kind; the keyed one is what the family's classifier finds in the series."""
    x = values(chan(item))
    assert not any("range from" in o for o in item["options"]), "a value range gives the key away"
    kinds = [next(v for k, v in SAME_FAMILY_KINDS if k in o) for o in item["options"]]
    assert len(set(map(str, kinds))) == len(kinds), kinds
    family, kind = next(v for k, v in SAME_FAMILY_KINDS if k in keyed(item))
    return FAMILY_CLASSIFIERS[family](x) == kind


def cross_family_kind(x: np.ndarray) -> str:
    """Seasonal = Fisher's g (p < 0.001) with an oscillating autocorrelation; spike = 1-3 readings
    6+ robust sd from a 7-point rolling median whose removal leaves no break and no trend; else the
    break model selection (level / variance); trend = an OLS line moving 5+ residual sd; else noise."""
    if fisher_g_pvalue(x) < 1e-3 and acf(x, len(x) // 4).min() < -0.5:
        return "seasonality"
    out = point_outlier_z(x) > 6
    if 1 <= int(out.sum()) <= 3:
        clean = np.where(out, rolling_median(x, 7), x)
        if break_kind(clean)[0] == "none" and abs(trend_size(clean)) < 5:
            return "spike"
    kind, _ = break_kind(x)
    if kind in ("level", "variance"):
        return f"{kind}_break"
    size = trend_size(x)
    if abs(size) > 5:
        return "trend_up" if size > 0 else "trend_down"
    return "noise"


CROSS_FAMILY_KEYS = {"rises steadily": "trend_up", "falls steadily": "trend_down", "regular cycle": "seasonality",
                     "isolated spikes": "spike", "jumps once": "level_break", "fluctuations suddenly": "variance_break",
                     "pure noise": "noise"}


def check_feat_describe_cross_family(item):
    want = next(v for k, v in CROSS_FAMILY_KEYS.items() if k in keyed(item))
    return cross_family_kind(values(chan(item))) == want


CHECKS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items() if name.startswith("check_")}
