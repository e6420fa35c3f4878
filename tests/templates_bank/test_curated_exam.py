"""The TimeSeriesExam-style synthetic templates (templates_bank/curated/exam), run through the sandbox.

Each template runs for 3 seeds x 5 samples (plus a repeat of seed 0); every item must validate.
Then a larger run (AGREEMENT_SAMPLES items) plus those 15 items are re-answered here from the
attached series alone, with standard statistics the templates never use (regression t-statistics,
periodograms, Ljung-Box, Granger F-tests, cross-correlations, changepoint fits, ...), and the
keyed answer must agree on at least 98% of them.
"""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import signal, stats
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.tsa.stattools import acf, adfuller, grangercausalitytests

from itemsmith.agents.authoring.taxonomy import CONCEPTS, TASK_KINDS
from itemsmith.items.schema import Item
from itemsmith.templates_bank.curated import CURATED_DIR, load_curated

try:
    from itemsmith.sandbox import run_template
except ImportError:  # the package may not re-export it
    from itemsmith.sandbox.executor import run_template

EXAM_DIR = CURATED_DIR / "exam"
MANIFEST = tomllib.loads((EXAM_DIR / "manifest.toml").read_text())["template"]
TEMPLATES = {Path(entry["file"]).stem: entry for entry in MANIFEST}
CATEGORIES = ("pattern_recognition", "noise_understanding", "similarity_analysis", "anomaly_detection", "causality")
SEEDS = (0, 1, 2)
SAMPLES = 5
AGREEMENT_SEED = 1000
AGREEMENT_SAMPLES = 60
MIN_POINTS, MAX_POINTS = 60, 300


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, int | str], object]:
    """(template id, seed) -> RunResult; ("id", "repeat") reruns seed 0, ("id", "many") is the large run."""
    out = {}
    for template_id, entry in TEMPLATES.items():
        source = (EXAM_DIR / entry["file"]).read_text()
        for seed in SEEDS:
            out[template_id, seed] = run_template(source, "synthetic", num_samples=SAMPLES, seed=seed)
        out[template_id, "repeat"] = run_template(source, "synthetic", num_samples=SAMPLES, seed=SEEDS[0])
        out[template_id, "many"] = run_template(source, "synthetic", num_samples=AGREEMENT_SAMPLES,
                                                seed=AGREEMENT_SEED)
    return out


# --- the bank ------------------------------------------------------------------------------


def test_manifest_lists_every_file_and_covers_every_exam_category():
    files = sorted(p.name for p in EXAM_DIR.glob("*.py"))
    assert files == sorted(entry["file"] for entry in MANIFEST)
    assert len(TEMPLATES) >= 16
    assert all(template_id.startswith("exam_") for template_id in TEMPLATES)
    counts = Counter(entry["category"] for entry in MANIFEST)
    for category in CATEGORIES:
        assert counts[category] >= 3, f"{category}: {counts[category]} templates, want >= 3"
    loaded = load_curated()
    for template_id, entry in TEMPLATES.items():
        assert entry.get("handler", "synthetic") == "synthetic"
        assert loaded[template_id].handler == "synthetic"
        assert loaded[template_id].category == entry["category"]
        assert loaded[template_id].difficulty in ("easy", "medium", "hard")
        *families, task = entry["concepts"]
        assert families and set(families) <= set(CONCEPTS) and task in TASK_KINDS, entry["concepts"]


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_runs_ok_and_items_are_well_formed(runs, template_id):
    for seed in (*SEEDS, "many"):
        result = runs[template_id, seed]
        assert result.status.value == "ok", f"seed {seed}: {result.error}\n{result.traceback_tail}"
        assert len(result.items) == (AGREEMENT_SAMPLES if seed == "many" else SAMPLES)
        for raw in result.items:
            item = Item.model_validate(raw)
            if item.kind.value == "tf":
                assert item.options == ["True", "False"]
            else:
                assert 3 <= len(item.options) <= 5
            assert item.rationale and item.metadata
            json.dumps(item.metadata)
            assert item.series
            for channel in item.series:
                assert MIN_POINTS <= len(channel.values) <= MAX_POINTS, (channel.name, len(channel.values))


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_same_seed_same_items_and_seeds_differ(runs, template_id):
    assert runs[template_id, "repeat"].items == runs[template_id, SEEDS[0]].items
    dumps = [json.dumps(runs[template_id, seed].items, sort_keys=True) for seed in SEEDS]
    assert len(set(dumps)) == len(SEEDS)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_keyed_answer_is_not_always_in_one_position_or_one_class(runs, template_id):
    items = runs[template_id, "many"].items
    assert len({item["answer_index"] for item in items}) >= 2
    assert len({keyed(item) for item in items}) >= 2


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_keyed_answers_agree_with_an_independent_computation(runs, template_id):
    items = [item for seed in (*SEEDS, "many") for item in runs[template_id, seed].items]
    assert len(items) >= 50
    verdicts = [bool(CHECKS[template_id](item)) for item in items]
    agreement = sum(verdicts) / len(verdicts)
    wrong = [items[i]["rationale"][:120] for i, ok in enumerate(verdicts) if not ok][:3]
    assert agreement >= 0.98, f"{template_id}: agreement {agreement:.1%} on {len(items)} items; e.g. {wrong}"


def test_every_template_has_an_independent_check():
    assert set(TEMPLATES) == set(CHECKS)


# --- shared statistics -----------------------------------------------------------------------


def keyed(item: dict) -> str:
    return item["options"][item["answer_index"]]


def chan(item: dict, name: str | None = None) -> dict:
    for s in item["series"]:
        if name is None or s["name"] == name:
            return s
    raise KeyError(name)


def values(s: dict) -> np.ndarray:
    return np.asarray(s["values"], dtype=float)


def slope_t(y: np.ndarray) -> float:
    """t-statistic of the OLS slope of y on time."""
    fit = stats.linregress(np.arange(len(y)), y)
    return float(fit.slope / fit.stderr) if fit.stderr > 0 else float("inf") * np.sign(fit.slope)


def r_squared(y: np.ndarray, degree: int) -> float:
    t = np.linspace(0.0, 1.0, len(y))
    residual = y - np.polyval(np.polyfit(t, y, degree), t)
    return 1.0 - float(np.var(residual) / np.var(y))


def peak_period(y: np.ndarray) -> float:
    """Period (samples) of the largest ordinate of the linearly detrended series' periodogram,
    zero-padded 8-fold so a fractional number of cycles does not lose the fundamental's peak."""
    freqs, power = signal.periodogram(y, detrend="linear", nfft=8 * len(y))
    usable = freqs >= 1.5 / len(y)
    k = int(np.argmax(np.where(usable, power, -1.0)))
    return 1.0 / float(freqs[k])


def sinusoid_fit(y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares sinusoid plus linear trend, its frequency refined on a fine grid around the
    periodogram peak: (amplitude, residual sd, period)."""
    n = len(y)
    t = np.arange(n, dtype=float)
    best = None
    centre = 1.0 / peak_period(y)
    for freq in np.linspace(max(centre - 1.0 / n, 0.5 / n), centre + 1.0 / n, 41):
        design = np.column_stack([np.ones(n), t, np.sin(2 * np.pi * freq * t), np.cos(2 * np.pi * freq * t)])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        sd = float(np.std(y - design @ coef))
        if best is None or sd < best[1]:
            best = (float(np.hypot(coef[2], coef[3])), sd, 1.0 / freq)
    return best


def nearest_log(options: list[str], value: float, parse) -> str:
    return options[int(np.argmin([abs(np.log(parse(o)) - np.log(value)) for o in options]))]


def classify_shape(y: np.ndarray) -> str:
    """noise (Ljung-Box), then linear / exponential (polynomial fits), then sine / square / sawtooth (jumps)."""
    if float(acorr_ljungbox(y, lags=[10])["lb_pvalue"].iloc[0]) > 0.001:
        return "noise"
    if r_squared(y, 1) > 0.97:
        return "linear"
    if r_squared(y, 2) > 0.95:
        return "exponential"
    half_range = (np.percentile(y, 99) - np.percentile(y, 1)) / 2
    jumps = np.diff(y)
    big = jumps[np.abs(jumps) > 0.8 * half_range]
    if big.size == 0:
        return "sine"
    if (big > 0).any() and (big < 0).any():
        return "square"
    return "sawtooth"


def robust_noise_sd(y: np.ndarray) -> float:
    """Noise sd from the MAD of first differences (unaffected by a few jumps)."""
    d = np.diff(y)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2))


def best_segment(y: np.ndarray) -> tuple[int, int]:
    """The [a, b) whose mean-shift model (inside vs outside) fits best: an epidemic changepoint fit."""
    n = len(y)
    cs = np.concatenate([[0.0], np.cumsum(y - y.mean())])
    a, b = np.triu_indices(n + 1, k=1)
    keep = (b - a) < n
    a, b = a[keep], b[keep]
    length = b - a
    gain = (cs[b] - cs[a]) ** 2 * n / (length * (n - length))
    k = int(np.argmax(gain))
    return int(a[k]), int(b[k])


def max_split_t(y: np.ndarray) -> float:
    """Largest two-sample mean difference over all single split points, in noise sd units (CUSUM-like)."""
    n, sd = len(y), robust_noise_sd(y)
    cs = np.cumsum(y)
    k = np.arange(5, n - 5)
    before, after = cs[k - 1] / k, (cs[-1] - cs[k - 1]) / (n - k)
    return float(np.max(np.abs(after - before) * np.sqrt(k * (n - k) / n)) / sd)


GRANGER_ALPHA = 1e-5  # the generated effects give p < 1e-8 at 150+ samples; strict enough that 2 tests rarely misfire


def granger_p(effect: np.ndarray, cause: np.ndarray, lag: int = 5) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = grangercausalitytests(np.column_stack([effect, cause]), maxlag=[lag])
    return float(result[lag][0]["ssr_ftest"][1])


def cross_corr_peak(a: np.ndarray, b: np.ndarray, max_lag: int = 15) -> int:
    """k maximizing |corr(a[t - k], b[t])| over -max_lag..max_lag (k > 0: a leads b)."""
    best, best_k = -1.0, 0
    for k in range(-max_lag, max_lag + 1):
        x, y = (a[:len(a) - k], b[k:]) if k >= 0 else (a[-k:], b[:len(b) + k])
        c = abs(stats.pearsonr(x, y).statistic)
        if c > best:
            best, best_k = c, k
    return best_k


def option_with(item: dict, phrase: str) -> str:
    (match,) = [o for o in item["options"] if phrase in o]
    return match


# --- independent checks, one per template --------------------------------------------------


def check_exam_trend_direction(item):
    y = values(chan(item))
    m = int(0.35 * len(y))
    head, tail = slope_t(y[:m]), slope_t(y[-m:])
    if head > 4 and tail < -4:
        phrase = "rises first"
    elif head < -4 and tail > 4:
        phrase = "falls first"
    else:
        t = slope_t(y)
        phrase = "An upward" if t > 3.5 else "A downward" if t < -3.5 else "No trend"
    return keyed(item) == option_with(item, phrase)


SHAPE_WORDS = {"sine": "Sine", "square": "Square", "sawtooth": "Sawtooth", "linear": "Linear",
               "exponential": "Exponential", "noise": "random noise"}


def check_exam_base_pattern(item):
    return keyed(item) == option_with(item, SHAPE_WORDS[classify_shape(values(chan(item)))])


def check_exam_period(item):
    period = peak_period(values(chan(item)))
    return keyed(item) == nearest_log(item["options"], period, lambda o: float(o.split()[0]))


def check_exam_composition(item):
    y = values(chan(item))
    n = len(y)
    fit = stats.linregress(np.arange(n), y)
    residual = y - (fit.intercept + fit.slope * np.arange(n))
    trend = abs(fit.slope * (n - 1)) > 1.5 * np.std(residual)
    freqs, power = signal.periodogram(residual)
    seasonal = power[1:].max() / power[1:].sum() > 0.25
    third = n // 3
    ratio = np.std(residual[-third:]) / np.std(residual[:third])
    if trend and seasonal:
        phrase = "Multiplicative" if max(ratio, 1 / ratio) > 1.8 else "Additive"
    elif trend:
        phrase = "Trend only"
    elif seasonal:
        phrase = "Seasonal cycle only"
    else:
        return False
    return keyed(item) == option_with(item, phrase)


REGIME_WORDS = {"sine": "sine wave", "square": "square wave", "sawtooth": "sawtooth wave",
                "linear": "straight-line trend", "noise": "pure random noise", "exponential": "?"}


def check_exam_regime_change(item):
    y = values(chan(item))
    m = int(0.38 * len(y))
    first, second = classify_shape(y[:m]), classify_shape(y[-m:])
    a, b = keyed(item).lower().split(", then ")
    return REGIME_WORDS[first] in a and REGIME_WORDS[second] in b


def check_exam_noisiest_series(item):
    snr = {s["name"]: (lambda fit: fit[0] / fit[1])(sinusoid_fit(values(s))) for s in item["series"]}
    pick = min if "lowest" in item["question"] else max
    return keyed(item) == pick(snr, key=snr.get)


def check_exam_process_type(item):
    y = values(chan(item))
    r1 = acf(y, nlags=1, fft=False)[1]
    adf_p = adfuller(y, maxlag=1, autolag=None, result_object=False)[1]
    if r1 < 0.3:
        phrase = "White noise"
    elif adf_p < 0.05 and r1 < 0.85:
        phrase = "AR(1)"
    else:
        phrase = "random walk"
    return keyed(item) == option_with(item, phrase)


def check_exam_pure_noise_tf(item):
    p = float(acorr_ljungbox(values(chan(item)), lags=[10])["lb_pvalue"].iloc[0])
    return (keyed(item) == "True") == (p > 0.001)


def check_exam_noise_variance_change(item):
    """Spearman rank correlation of |return| with time: a trend in the size of the fluctuations."""
    y = values(chan(item))
    test = stats.spearmanr(np.arange(len(y)), np.abs(y - np.median(y)))
    if test.pvalue > 0.001:
        phrase = "stays"
    else:
        phrase = "grows" if test.statistic > 0 else "shrinks"
    return keyed(item) == option_with(item, phrase)


def check_exam_similar_shape(item):
    reference = values(chan(item, "reference"))
    corr = {s["name"]: stats.pearsonr(reference, values(s)).statistic for s in item["series"]
            if s["name"] != "reference"}
    return keyed(item) == max(corr, key=corr.get)


def check_exam_same_period(item):
    period = {s["name"]: peak_period(values(s)) for s in item["series"]}
    target = period.pop("reference")
    closest = min(period, key=lambda name: abs(np.log(period[name] / target)))
    return keyed(item) == closest and abs(np.log(period[closest] / target)) < np.log(1.15)


def check_exam_most_similar_pair(item):
    z = {s["name"]: stats.zscore(values(s)) for s in item["series"]}
    names = sorted(z)
    distance = {f"{a} and {b}": float(np.linalg.norm(z[a] - z[b])) for i, a in enumerate(names) for b in names[i + 1:]}
    return keyed(item) == min(distance, key=distance.get)


def check_exam_anomaly_presence_tf(item):
    y = values(chan(item))
    sd = robust_noise_sd(y)
    outlier = np.max(np.abs(y - np.median(y))) / sd > 5
    shift = max_split_t(y) > 7
    return (keyed(item) == "True") == bool(outlier or shift)


def check_exam_spike_location(item):
    s = chan(item)
    y = values(s)
    residual = y - pd.Series(y).rolling(7, center=True, min_periods=1).median().to_numpy()
    index = int(np.argmax(np.abs(residual)))
    lo, hi = keyed(item).removeprefix("samples ").split(" to ")
    if s.get("timestamps"):
        return lo <= s["timestamps"][index] <= hi
    return int(lo) <= index <= int(hi)


def check_exam_anomaly_type(item):
    y = values(chan(item))
    n = len(y)
    zero_runs = np.convolve((y == 0).astype(int), [1, 1], mode="valid")
    if (zero_runs == 2).any():
        phrase = "dropout"
    else:
        freqs, power = signal.periodogram(y)
        k = 1 + int(np.argmax(power[1:]))
        amplitude, residual_sd, period = sinusoid_fit(y)
        if 1 / freqs[k] <= n / 4 and power[k] / power[1:].sum() > 0.3:
            phrase = "contextual"
        else:
            a, b = best_segment(y)
            if a <= 1 or b >= n - 1:
                phrase = "level shift"
            elif b - a <= 2:
                phrase = "spike"
            else:
                phrase = "temporary plateau"
    return keyed(item) == option_with(item, phrase)


def check_exam_granger_tf(item):
    cause, effect = re.search(r"True or false: (\w) Granger-causes (\w)", item["question"]).groups()
    p = granger_p(values(chan(item, effect)), values(chan(item, cause)))
    return (keyed(item) == "True") == (p < GRANGER_ALPHA)


def check_exam_granger_direction(item):
    a, b = values(chan(item, "series A")), values(chan(item, "series B"))
    a_causes_b = granger_p(b, a) < GRANGER_ALPHA
    b_causes_a = granger_p(a, b) < GRANGER_ALPHA
    if a_causes_b and not b_causes_a:
        phrase = "A Granger-causes B"
    elif b_causes_a and not a_causes_b:
        phrase = "B Granger-causes A"
    elif not (a_causes_b or b_causes_a):
        phrase = "Neither"
    else:
        return False
    return keyed(item) == option_with(item, phrase)


def check_exam_lead_lag(item):
    k = cross_corr_peak(values(chan(item, "series A")), values(chan(item, "series B")))
    if k == 0:
        return False
    expected = f"Series A leads series B by {k} day" if k > 0 else f"Series B leads series A by {-k} day"
    return keyed(item) == expected or keyed(item) == expected + "s"


CHECKS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items() if name.startswith("check_")}
