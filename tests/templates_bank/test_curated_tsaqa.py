"""The TSAQA-style curated templates (templates_bank/curated/tsaqa), run through the sandbox.

Each template runs for 3 seeds x 5 samples (plus a repeat of seed 0); every item must validate. Its keyed
answer is then recomputed here, independently of the template's code, from the attached series only, on a
larger run of 60 items per template: np.fft / np.diff / pywt / numpy z-score recomputation for the
transformation questions, boundary continuity (two-sided linear extrapolation across each join) for the
temporal-relation and puzzle questions, window medians for "which came first", and a sliding Pearson
correlation over every offset for locating a window.
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import pywt
from scipy import stats

from itemsmith.items.schema import Item
from itemsmith.templates_bank.curated import CURATED_DIR, load_curated

try:
    from itemsmith.sandbox import run_template
except ImportError:  # the package may not re-export it
    from itemsmith.sandbox.executor import run_template

TSAQA_DIR = CURATED_DIR / "tsaqa"
MANIFEST = tomllib.loads((TSAQA_DIR / "manifest.toml").read_text())["template"]
TEMPLATES = {Path(entry["file"]).stem: entry for entry in MANIFEST}
SEEDS = (0, 1, 2)
SAMPLES = 5
CHECK_SEED = 12345
CHECK_SAMPLES = 60
MAX_POINTS = 1500


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, int | str], object]:
    """(template id, seed) -> RunResult; ("id", "repeat") reruns seed 0, ("id", "check") is the big run."""
    out = {}
    for template_id, entry in TEMPLATES.items():
        source = (TSAQA_DIR / entry["file"]).read_text()
        for seed in SEEDS:
            out[template_id, seed] = run_template(source, "synthetic", num_samples=SAMPLES, seed=seed)
        out[template_id, "repeat"] = run_template(source, "synthetic", num_samples=SAMPLES, seed=SEEDS[0])
        out[template_id, "check"] = run_template(source, "synthetic", num_samples=CHECK_SAMPLES, seed=CHECK_SEED)
    return out


# --- the bank ------------------------------------------------------------------------------


def test_manifest_lists_every_file_with_tsaqa_ids_and_categories():
    files = sorted(p.name for p in TSAQA_DIR.glob("*.py"))
    assert files == sorted(entry["file"] for entry in MANIFEST)
    assert len(TEMPLATES) >= 12
    loaded = load_curated()
    for template_id, entry in TEMPLATES.items():
        assert template_id.startswith("tsaqa_")
        assert entry["handler"] == "synthetic"
        assert loaded[template_id].category in ("transformation", "temporal_relation")
        assert loaded[template_id].difficulty in ("easy", "medium", "hard")
    categories = Counter(entry["category"] for entry in MANIFEST)
    assert categories["transformation"] >= 5 and categories["temporal_relation"] >= 5


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_runs_ok_and_items_are_well_formed(runs, template_id):
    for seed in (*SEEDS, "check"):
        result = runs[template_id, seed]
        assert result.status.value == "ok", f"seed {seed}: {result.error}\n{result.traceback_tail}"
        assert len(result.items) == (CHECK_SAMPLES if seed == "check" else SAMPLES)
        for raw in result.items:
            item = Item.model_validate(raw)
            if item.kind.value == "tf":
                assert item.options == ["True", "False"]
            else:
                assert 3 <= len(item.options) <= 5
            assert item.rationale and item.metadata
            json.dumps(item.metadata)
            assert item.series and sum(len(s.values) for s in item.series) <= MAX_POINTS
            assert all(len(s.values) >= 16 for s in item.series)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_same_seed_same_items_and_seeds_differ(runs, template_id):
    assert runs[template_id, "repeat"].items == runs[template_id, SEEDS[0]].items
    dumps = [json.dumps(runs[template_id, seed].items, sort_keys=True) for seed in SEEDS]
    assert len(set(dumps)) == len(SEEDS)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_answers_are_spread(runs, template_id):
    """The keyed option's position varies, and so does the keyed channel where options name channels."""
    items = runs[template_id, "check"].items
    kinds = {item["kind"] for item in items}
    assert kinds == ({"pz"} if "puzzle" in template_id else {"tf"} if template_id.endswith("_tf") else {"mc"})
    assert len({item["answer_index"] for item in items}) >= 2
    answers = Counter(keyed(item) for item in items)
    assert answers.most_common(1)[0][1] <= 0.75 * len(items)


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_keyed_answers_agree_with_an_independent_computation(runs, template_id):
    items = runs[template_id, "check"].items
    assert len(items) >= 50
    verdicts = [bool(CHECKS[template_id](item)) for item in items]
    agreement = sum(verdicts) / len(verdicts)
    wrong = [items[i]["rationale"][:120] for i, ok in enumerate(verdicts) if not ok][:3]
    assert agreement >= 0.98, f"{template_id}: agreement {agreement:.0%}; e.g. {wrong}"


# --- independent checks -------------------------------------------------------------------


def keyed(item: dict) -> str:
    return item["options"][item["answer_index"]]


def channels(item: dict) -> dict[str, np.ndarray]:
    return {s["name"]: np.asarray(s["values"], dtype=float) for s in item["series"]}


def closest(target: np.ndarray, candidates: dict[str, np.ndarray]) -> str:
    """The candidate nearest to `target` in RMS (a length mismatch counts as infinitely far)."""
    def dist(v: np.ndarray) -> float:
        return float(np.sqrt(np.mean((v - target) ** 2))) if v.shape == target.shape else np.inf
    return min(candidates, key=lambda k: dist(candidates[k]))


def spectrum(x: np.ndarray) -> np.ndarray:
    """|FFT| without the DC term, from the full complex FFT (elements 1 .. n//2)."""
    return np.abs(np.fft.fft(x))[1:len(x) // 2 + 1]


def wavelet_smooth(x: np.ndarray) -> np.ndarray:
    coeffs = pywt.wavedec(x, "db4", level=3)
    return pywt.waverec([coeffs[0]] + [np.zeros_like(c) for c in coeffs[1:]], "db4")[:len(x)]


def zscore(x: np.ndarray) -> np.ndarray:
    return stats.zscore(x, ddof=0)


def join_cost(a: np.ndarray, b: np.ndarray, m: int = 4) -> float:
    """How badly `b` continues `a`: the gap between a line fitted to a's last m points, extrapolated one
    step forward, and b[0], plus the gap between a line fitted to b's first m points, extrapolated one
    step back, and a[-1]."""
    t = np.arange(m)
    forward = np.polyval(np.polyfit(t, a[-m:], 1), m)
    backward = np.polyval(np.polyfit(t, b[:m], 1), -1)
    return abs(forward - b[0]) + abs(backward - a[-1])


def candidates_of(item: dict, prefix: str) -> dict[str, np.ndarray]:
    return {k: v for k, v in channels(item).items() if k.startswith(prefix)}


def check_fourier_magnitude_match(item):
    ch = channels(item)
    return closest(spectrum(ch["reference"]), candidates_of(item, "candidate")) == keyed(item)


def check_series_from_spectrum(item):
    target = channels(item)["spectrum"]
    spectra = {k: spectrum(v) for k, v in candidates_of(item, "series").items()}
    return closest(target, spectra) == keyed(item)


def check_first_difference_match(item):
    x = channels(item)["reference"]
    return closest(x[1:] - x[:-1], candidates_of(item, "candidate")) == keyed(item)


def check_wavelet_approximation_match(item):
    x = channels(item)["reference"]
    cands = candidates_of(item, "candidate")
    # exact pywt recomputation, and the nearest candidate to a plain 9-point moving average agrees
    moving = np.convolve(np.pad(x, 4, mode="edge"), np.ones(9) / 9, mode="valid")
    return closest(wavelet_smooth(x), cands) == keyed(item) == closest(moving, cands)


TRANSFORMS = {
    "first difference": lambda x: x[1:] - x[:-1],
    "Fourier amplitude spectrum": spectrum,
    "wavelet approximation": wavelet_smooth,
    "z-score normalisation": zscore,
}


def matches(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-6, atol=1e-6))


def full_spectrum(x: np.ndarray) -> np.ndarray:
    """The two-sided amplitude spectrum with the DC bin zeroed (as long as x)."""
    out = np.abs(np.fft.fft(x))
    out[0] = 0.0
    return out


# transform_identify keeps B as long as A: a leading 0 for the difference, the two-sided spectrum
SAME_LENGTH_TRANSFORMS = {
    "first difference": lambda x: np.concatenate([[0.0], x[1:] - x[:-1]]),
    "Fourier amplitude spectrum": full_spectrum,
    "wavelet approximation": wavelet_smooth,
    "z-score normalisation": zscore,
}


def check_transform_identify(item):
    ch = channels(item)
    assert len(ch["A"]) == len(ch["B"]), "B's length would give the transform away"
    found = [name for name, fn in SAME_LENGTH_TRANSFORMS.items() if matches(fn(ch["A"]), ch["B"])]
    return len(found) == 1 and keyed(item).startswith(found[0])


def check_transform_tf(item):
    ch = channels(item)
    claim = re.search(r"B is the (first difference|Fourier amplitude spectrum|wavelet approximation)",
                      item["question"]).group(1)
    return (keyed(item) == "True") == matches(TRANSFORMS[claim](ch["A"]), ch["B"])


def check_zscore_match(item):
    x = channels(item)["reference"]
    cands = candidates_of(item, "candidate")
    z = (x - np.mean(x)) / np.std(x)
    return closest(z, cands) == keyed(item) and matches(cands[keyed(item)], zscore(x))


def check_next_segment_mc(item):
    cands = candidates_of(item, "candidate")
    shown = channels(item)["shown"]
    return min(cands, key=lambda k: join_cost(shown, cands[k])) == keyed(item)


def check_previous_segment_mc(item):
    cands = candidates_of(item, "candidate")
    shown = channels(item)["shown"]
    return min(cands, key=lambda k: join_cost(cands[k], shown)) == keyed(item)


def check_next_segment_tf(item):
    ch = channels(item)
    return (keyed(item) == "True") == (join_cost(ch["A"], ch["B"]) < 0.6)


def check_earliest_segment(item):
    medians = {k: float(np.median(v)) for k, v in channels(item).items()}
    rising = "rises steadily" in item["question"]
    first = "recorded first" in item["question"]
    want_low = rising == first  # the first window of a rising series is the lowest, ...
    pick = min(medians, key=medians.get) if want_low else max(medians, key=medians.get)
    return pick == keyed(item)


def check_segment_locate(item):
    ch = channels(item)
    x, w = ch["series"], ch["window"]
    L = len(w)
    r = [stats.pearsonr(w, x[d:d + L])[0] for d in range(len(x) - L + 1)]
    d = int(np.argmax(r))
    return keyed(item) == f"samples {d}-{d + L - 1}"


def check_puzzle(item):
    """The ordering of S1..Sk that minimises the summed join cost over all permutations."""
    ch = channels(item)
    labels = [k for k in ch if k != "given"]
    def total(perm):
        seq = ["given", *perm]
        return sum(join_cost(ch[a], ch[b]) for a, b in zip(seq, seq[1:]))
    best = min(itertools.permutations(labels), key=total)
    return " -> ".join(best) == keyed(item)


CHECKS = {
    "tsaqa_fourier_magnitude_match": check_fourier_magnitude_match,
    "tsaqa_series_from_spectrum": check_series_from_spectrum,
    "tsaqa_first_difference_match": check_first_difference_match,
    "tsaqa_wavelet_approximation_match": check_wavelet_approximation_match,
    "tsaqa_transform_identify": check_transform_identify,
    "tsaqa_transform_tf": check_transform_tf,
    "tsaqa_zscore_match": check_zscore_match,
    "tsaqa_next_segment_mc": check_next_segment_mc,
    "tsaqa_previous_segment_mc": check_previous_segment_mc,
    "tsaqa_next_segment_tf": check_next_segment_tf,
    "tsaqa_earliest_segment": check_earliest_segment,
    "tsaqa_segment_locate": check_segment_locate,
    "tsaqa_puzzle_trend_season": check_puzzle,
    "tsaqa_puzzle_smooth_walk": check_puzzle,
}


def test_every_template_has_a_check():
    assert set(CHECKS) == set(TEMPLATES)
