"""Independent solvers and blind rules for the curated templates a held-out audit of the bank
flagged (shared by tests/templates_bank/test_curated_independent.py and
benchmarks/curated_independent.py).

SOLVERS re-answer an item from its shown series (and question) with a statistic the template does
not use: an AIC-ordered VAR Wald test for Granger direction, KPSS for stationarity, ARCH-LM and a
GJR-type regression for volatility, a k-NN over the archive's training days for the power-demand
season, a band-pass R-peak detector for heart rate, plain recounts for the real-data
arithmetic. Each returns the option index it picks (None: it cannot decide, which counts as a
disagreement). The rest of the bank is re-answered by the CHECKS of the four older per-folder
test modules (`older_checks`), which return agree / disagree.

BLIND_RULES answer without reading the series' values: each is the one-line cue the audit found
(cycle count, stretch length, a remembered question, a season or a day's remembered share, the
day number's place in the stretch), fitted on training items and scored on held-out ones.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from scipy import signal, stats

Item = dict[str, Any]
Solver = Callable[[Item], "int | None"]
BlindRule = Callable[[Sequence[Item]], Callable[[Item], int]]

HERE = Path(__file__).parent
FS = 360  # ECG sampling rate


def values(item: Item, name: str | None = None) -> np.ndarray:
    for s in item["series"]:
        if name is None or s["name"] == name:
            return np.asarray(s["values"], dtype=float)
    raise KeyError(name)


def option_with(item: Item, phrase: str, *, start: bool = False) -> int | None:
    """The one option containing (or, with start, beginning with) `phrase`; None if not exactly one."""
    found = [i for i, o in enumerate(item["options"])
             if (o.startswith(phrase) if start else phrase.lower() in o.lower())]
    return found[0] if len(found) == 1 else None


def nearest(options: Sequence[str], value: float, parse: Callable[[str], float], *, log: bool = False) -> int:
    f = np.log if log else (lambda v: v)
    return int(np.argmin([abs(f(parse(o)) - f(value)) for o in options]))


def number(text: str) -> float:
    return float(re.search(r"-?\d+(?:\.\d+)?", text).group())


# --- synthetic families ---------------------------------------------------------------------------


def solve_exam_period(item: Item) -> int | None:
    """The option p whose autocorrelation at lag p most exceeds that at lag p/2 (a period p makes
    the series repeat at p and turn over at p/2; a multiple 2p repeats at p too, a divisor p/2
    turns over at p/2 itself)."""
    y = values(item)
    y = y - np.polyval(np.polyfit(np.arange(len(y)), y, 1), np.arange(len(y)))
    y = (y - y.mean()) / y.std()
    n = len(y)

    def acf(k: int) -> float:
        return float(np.dot(y[:-k], y[k:]) / n) if 0 < k < n else 0.0

    periods = [number(o) for o in item["options"]]
    score = [acf(int(p)) - acf(max(1, int(round(p / 2)))) for p in periods]
    return int(np.argmax(score))


def _var_causes(cause: np.ndarray, effect: np.ndarray, lags: int) -> float:
    """p-value of the Wald test that `cause` does not Granger-cause `effect` in a VAR(lags)."""
    from statsmodels.tsa.api import VAR

    frame = np.column_stack([effect, cause])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = VAR(frame).fit(lags, trend="c")
        return float(fit.test_causality(0, [1], kind="wald").pvalue)


def solve_exam_granger_direction(item: Item) -> int | None:
    """VAR with the lag order AIC picks (1-8); Wald tests both ways at the 5% level."""
    from statsmodels.tsa.api import VAR

    a, b = values(item, "series A"), values(item, "series B")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        order = max(1, int(VAR(np.column_stack([a, b])).select_order(8).aic))
    a_to_b, b_to_a = _var_causes(a, b, order) < 0.05, _var_causes(b, a, order) < 0.05
    if a_to_b and not b_to_a:
        return option_with(item, "A Granger-causes B")
    if b_to_a and not a_to_b:
        return option_with(item, "B Granger-causes A")
    if not (a_to_b or b_to_a):
        return option_with(item, "Neither")
    return None


def solve_exam_granger_tf(item: Item) -> int | None:
    """The statement "c Granger-causes e" is true when the VAR (AIC's lag order) Wald test rejects
    non-causality at 5%."""
    from statsmodels.tsa.api import VAR

    cause, effect = re.search(r"True or false: (\w) Granger-causes (\w)", item["question"]).groups()
    c, e = values(item, cause), values(item, effect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        order = max(1, int(VAR(np.column_stack([e, c])).select_order(8).aic))
    return 0 if _var_causes(c, e, order) < 0.05 else 1


def solve_feat_stationarity_classify(item: Item) -> int | None:
    """KPSS (not the ADF the older check uses): level-stationary if the level test keeps
    stationarity; trend-stationary if only the trend test does and the OLS slope is significant;
    a random walk if both reject."""
    from statsmodels.tsa.stattools import kpss

    y = values(item)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_level = kpss(y, regression="c", nlags="auto")[1]
        p_trend = kpss(y, regression="ct", nlags="auto")[1]
    if p_level > 0.05:
        return option_with(item, "Stationary:", start=True)
    if p_trend > 0.05 and stats.linregress(np.arange(len(y)), y).pvalue < 1e-3:
        return option_with(item, "Trend-stationary")
    if p_trend <= 0.05:
        return option_with(item, "random walk")
    return None


def solve_feat_volatility_classify(item: Item) -> int | None:
    """Trend in the size of the moves (Spearman of |r| with time), then conditional
    heteroscedasticity (Engle's ARCH-LM, 5 lags), then asymmetry: mean |r_t| after the quarter
    of lowest r_{t-1} over that after the quarter of highest, leverage above 1.32."""
    from statsmodels.stats.diagnostic import het_arch

    r = values(item)
    r = r - np.median(r)
    trend = stats.spearmanr(np.arange(len(r)), np.abs(r))
    if trend.pvalue < 1e-4 and trend.statistic > 0:
        return option_with(item, "Increasing")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arch_p = het_arch(r, nlags=5)[1]
    if arch_p > 0.01:
        return option_with(item, "Constant")
    prev, size = r[:-1], np.abs(r[1:])
    low, high = np.quantile(prev, [0.25, 0.75])
    asymmetry = size[prev <= low].mean() / size[prev >= high].mean()
    return option_with(item, "leverage effect" if asymmetry > 1.32 else "as much as large falls")


# --- real data ------------------------------------------------------------------------------------


def solve_weather_rainy_days_count(item: Item) -> int | None:
    count = int((values(item) > 0).sum())
    return item["options"].index(str(count)) if str(count) in item["options"] else None


def solve_weather_wettest_month(item: Item) -> int | None:
    """The option (a shown series' name, or a date range of the one shown series) with the
    largest precipitation total."""
    by_name = {s["name"]: float(np.sum(s["values"])) for s in item["series"]}
    if all(o in by_name for o in item["options"]):
        totals = [by_name[o] for o in item["options"]]
    else:
        days = np.array(item["series"][0]["timestamps"])
        rain = values(item)
        totals = [float(rain[(days >= o.split(" to ")[0]) & (days <= o.split(" to ")[1])].sum())
                  for o in item["options"]]
    return int(np.argmax(totals))


def solve_glucose_hypo_tf(item: Item) -> int | None:
    return 0 if values(item).min() < 70 else 1


def solve_glucose_time_in_range(item: Item) -> int | None:
    g = values(item)
    share = 100.0 * np.mean((g >= 70) & (g <= 180))
    return nearest(item["options"], share, number)


def r_peaks(x: np.ndarray) -> np.ndarray:
    """R-peaks from the Hilbert envelope of the 5-25 Hz band: peaks at least 300 ms apart whose
    prominence exceeds 15% of the envelope's 99th percentile (the settings that match the
    handler's beat counts on most of its 30 windows: 24)."""
    b, a = signal.butter(3, [5, 25], btype="band", fs=FS)
    envelope = np.abs(signal.hilbert(signal.filtfilt(b, a, x)))
    found, _ = signal.find_peaks(envelope, prominence=0.15 * np.percentile(envelope, 99), distance=int(0.3 * FS))
    return found


def solve_ecg_heart_rate_estimate(item: Item) -> int | None:
    peaks = r_peaks(values(item))
    if len(peaks) < 2:
        return None
    return nearest(item["options"], 60.0 * FS / float(np.mean(np.diff(peaks))), number)


def solve_stocks_largest_daily_move(item: Item) -> int | None:
    p = values(item)
    day = int(np.argmax(np.abs(p[1:] / p[:-1] - 1.0))) + 2  # the question's measure: % change
    return item["options"].index(f"day {day}") if f"day {day}" in item["options"] else None


def solve_stocks_highest_close_date(item: Item) -> int | None:
    p = values(item)
    day = (int(np.argmin(p)) if " lowest?" in item["question"] else int(np.argmax(p))) + 1
    return item["options"].index(f"day {day}") if f"day {day}" in item["options"] else None


@functools.cache
def _italy() -> tuple[np.ndarray, np.ndarray, dict[tuple, int]]:
    """Training-split profiles and labels, and every archive day's label by its rounded profile."""
    from itemsmith.handlers.registry import get_builtin

    data = get_builtin("italy_power")
    rec = data.records()
    profiles = np.array([data.series(r)["demand"].to_numpy(dtype=float) for r in rec["record_id"]])
    labels = rec["label"].to_numpy(dtype=int)
    train = (rec["split"] == "train").to_numpy()
    by_profile = {tuple(np.round(p, 6)): int(c) for p, c in zip(profiles, labels, strict=True)}
    return profiles[train], labels[train], by_profile


def italy_half(profile: np.ndarray) -> int | None:
    """1 (October-March) or 2 (April-September) when the archive's label, a 5-NN vote over the
    training days (Euclidean) and the evening-vs-daytime mean demand all say so; else None."""
    train, train_labels, by_profile = _italy()
    archive = by_profile.get(tuple(np.round(profile, 6)))
    vote = train_labels[np.argsort(((train - profile) ** 2).sum(axis=1))[:5]]
    knn = 1 if (vote == 1).sum() >= 3 else 2
    shape = 1 if profile[17:21].mean() > profile[9:16].mean() else 2
    return archive if archive == knn == shape else None


def solve_italy_power_season_tf(item: Item) -> int | None:
    half = italy_half(values(item))
    if half is None:
        return None
    claims_cold = "October-March half" in item["question"]
    return 0 if (half == 1) == claims_cold else 1


def solve_italy_power_odd_season(item: Item) -> int | None:
    halves = [italy_half(values(item, s["name"])) for s in item["series"]]
    if None in halves:
        return None
    odd = [s["name"] for s, h in zip(item["series"], halves, strict=True) if halves.count(h) == 1]
    return item["options"].index(odd[0]) if len(odd) == 1 else None


SOLVERS: dict[str, Solver] = {
    name.removeprefix("solve_"): fn for name, fn in dict(globals()).items() if name.startswith("solve_")
}


# --- the older per-folder checks, for the rest of the bank ---------------------------------------


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"curated_checks_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def older_checks() -> dict[str, Callable[[Item], bool]]:
    """template id -> the independent check of test_curated_{exam,features,real,tsaqa}.py."""
    out: dict[str, Callable[[Item], bool]] = {}
    for folder in ("exam", "features", "real", "tsaqa"):
        out.update(_load(HERE / f"test_curated_{folder}.py").CHECKS)
    return out


def agrees(template_id: str, item: Item) -> bool:
    """Whether the independent solver (or, for templates without one here, the older check) gives
    the keyed answer."""
    if template_id in SOLVERS:
        return SOLVERS[template_id](item) == item["answer_index"]
    return bool(older_checks()[template_id](item))


# --- blind rules: the audit's cues, fitted on training items --------------------------------------


def _length(item: Item) -> int:
    return len(item["series"][0]["values"])


def blind_cycle_band(train: Sequence[Item]) -> Callable[[Item], int]:
    """exam_period: the option whose cycle count (shown length / period) is nearest the keys'
    median cycle count in training."""
    def cycles(item: Item, option: str) -> float:
        return float(re.search(r"\((\d+) days", item["question"]).group(1)) / number(option)

    typical = float(np.median([cycles(i, i["options"][i["answer_index"]]) for i in train]))
    return lambda item: int(np.argmin([abs(np.log(cycles(item, o) / typical)) for o in item["options"]]))


def blind_length_to_true(train: Sequence[Item]) -> Callable[[Item], int]:
    """TF: True when the stretch is longer than the training items' median length, if long ones
    were true more often in training (else the other way round)."""
    lengths = np.array([_length(i) for i in train])
    true = np.array([i["answer_index"] == 0 for i in train])
    cut = float(np.median(lengths))
    long_true = true[lengths > cut].mean() >= true[lengths <= cut].mean()
    return lambda item: 0 if (_length(item) > cut) == long_true else 1


def blind_remembered_question(train: Sequence[Item]) -> Callable[[Item], int]:
    """A question seen in training: the option nearest the key it had then (numeric options);
    an unseen one: the first option."""
    seen: dict[str, list[float]] = defaultdict(list)
    for i in train:
        seen[i["question"]].append(number(i["options"][i["answer_index"]]))

    def pick(item: Item) -> int:
        if item["question"] not in seen:
            return 0
        return nearest(item["options"], float(np.mean(seen[item["question"]])), number)
    return pick


def blind_remembered_record(train: Sequence[Item]) -> Callable[[Item], int]:
    """The option nearest the mean key of training items on the same record (series name and
    first timestamp's day, or the metadata's record ids): a day's remembered share."""
    def record(item: Item) -> str:
        s = item["series"][0]
        return f"{s['name']} {(s.get('timestamps') or [''])[0][:10]}"

    seen: dict[str, list[float]] = defaultdict(list)
    for i in train:
        seen[record(i)].append(number(i["options"][i["answer_index"]]))

    def pick(item: Item) -> int:
        if record(item) not in seen:
            return 0
        return nearest(item["options"], float(np.mean(seen[record(item)])), number)
    return pick


def blind_season_share(train: Sequence[Item]) -> Callable[[Item], int]:
    """weather_rainy_days_count: the option nearest (stretch length) x (training keys' mean rainy
    share for the stretch's first month)."""
    def month(item: Item) -> int:
        return int(item["series"][0]["timestamps"][0][5:7])

    shares: dict[int, list[float]] = defaultdict(list)
    for i in train:
        shares[month(i)].append(number(i["options"][i["answer_index"]]) / _length(i))
    overall = float(np.mean([v for vs in shares.values() for v in vs]))

    def pick(item: Item) -> int:
        share = float(np.mean(shares[month(item)])) if shares.get(month(item)) else overall
        return nearest(item["options"], share * _length(item), number)
    return pick


# Sea-Tac monthly precipitation normals (1991-2020, inches): a climate prior no item shows
SEATTLE_NORMALS_IN = [5.78, 3.76, 4.17, 3.18, 2.25, 1.57, 0.60, 0.97, 1.67, 3.90, 6.32, 5.72]


def blind_climate_normals(train: Sequence[Item]) -> Callable[[Item], int]:
    """weather_wettest_month: the option (a date range, or a series' dates) whose days have the
    largest climatological precipitation (monthly normals interpolated to days)."""
    del train
    mids = np.array([15.0 + 30.4 * k for k in range(12)])
    xs = np.concatenate([mids - 365, mids, mids + 365])
    ys = np.tile(SEATTLE_NORMALS_IN, 3)

    def climate(days: Sequence[str]) -> float:
        doy = [(np.datetime64(f"2000-{d[5:10]}") - np.datetime64("2000-01-01")).astype(int) for d in days]
        return float(np.interp(doy, xs, ys).sum())

    def pick(item: Item) -> int:
        by_name = {s["name"]: s.get("timestamps") for s in item["series"]}
        scores = []
        for option in item["options"]:
            if by_name.get(option):
                scores.append(climate(by_name[option]))
            else:
                lo, hi = option.split(" to ")
                scores.append(climate([str(d) for d in np.arange(np.datetime64(lo), np.datetime64(hi) + 1)]))
        return int(np.argmax(scores))
    return pick


def _day_numbers(item: Item) -> np.ndarray:
    return np.array([number(o) for o in item["options"]])


def blind_day_place(train: Sequence[Item]) -> Callable[[Item], int]:
    """stocks: the option whose day lies nearest the stretch's middle, or the one farthest from
    it, whichever won more often in training (extremes and largest moves sit near the edges or
    the middle more often than the distractors did)."""
    def offsets(item: Item) -> np.ndarray:
        return np.abs(_day_numbers(item) - (_length(item) + 1) / 2)

    nearest_wins = np.mean([int(np.argmin(offsets(i))) == i["answer_index"] for i in train])
    farthest_wins = np.mean([int(np.argmax(offsets(i))) == i["answer_index"] for i in train])
    pick = np.argmin if nearest_wins >= farthest_wins else np.argmax
    return lambda item: int(pick(offsets(item)))


BLIND_RULES: dict[str, BlindRule] = {
    "exam_period": blind_cycle_band,
    "glucose_hypo_tf": blind_length_to_true,
    "ecg_heart_rate_estimate": blind_remembered_question,
    "glucose_time_in_range": blind_remembered_record,
    "weather_rainy_days_count": blind_season_share,
    "weather_wettest_month": blind_climate_normals,
    "stocks_largest_daily_move": blind_day_place,
    "stocks_highest_close_date": blind_day_place,
}


def blind_accuracy(rule: BlindRule, items_by_seed: dict[int, list[Item]]) -> tuple[float, float, int]:
    """Leave-one-seed-out: (accuracy, chance, items) of `rule` fitted on the other seeds' items."""
    hits, chance = [], []
    for seed, held in items_by_seed.items():
        train = [i for s, its in items_by_seed.items() if s != seed for i in its]
        pick = rule(train)
        hits += [pick(i) == i["answer_index"] for i in held]
        chance += [1.0 / len(i["options"]) for i in held]
    return float(np.mean(hits)), float(np.mean(chance)), len(hits)


def beats_chance(accuracy: float, chance: float, n: int, z: float = 3.0) -> bool:
    """Whether `accuracy` over n items lies more than z binomial sds above `chance`."""
    return accuracy > chance + z * np.sqrt(chance * (1 - chance) / n)
