"""Benchmark: every key of an `itemsmith author` run's accepted templates recomputed from the series
its item shows, with numpy/scipy and none of itemsmith's blocks.

Draws `--samples` items of each template in the run's `templates/` folder (the sandbox's
structure check, a fixed seed), then recomputes each key from what a reader of the item has: the
shown series (values, timestamps, names) and the parameters the question states (thresholds,
window parts, the trend's "strongly"/"slightly" bounds, the correlation bands, the largest lag).
The item's recorded block name only picks the recomputation. Where the question leaves a parameter
unstated, the block's documented default is used (level shift: at least 5 values a side; the
standard deviation of a statistic: over n, though its question does not say so: over n - 1 the
nearest option was another in 2 of 8 weather items tried). A kind with no recomputation here is
counted as such, never as agreeing. Prints one JSON line per template and a total.

    python benchmarks/author_keys.py /tmp/author-run/weather/weather6 [--samples 20] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from itemsmith.sandbox import SandboxPool
from itemsmith.verification.structure import check_structure

Item = dict[str, Any]
MAD = 1.4826
NUMBER = r"(-?\d+(?:\.\d+)?)"


def _values(item: Item, index: int = 0) -> np.ndarray:
    return np.array(item["series"][index]["values"], dtype=float)


def _dates(item: Item, index: int = 0) -> list[str]:
    return list(item["series"][index].get("timestamps") or [])


def _number(text: str) -> float:
    return float(re.match(NUMBER, text.strip()).group(1))  # type: ignore[union-attr]


def _stated(pattern: str, question: str, default: float) -> float:
    found = re.search(pattern, question)
    return float(found.group(1)) if found else default


def trend(item: Item) -> str:
    v = _values(item)
    x = np.arange(len(v))
    slope = stats.theilslopes(v, x, alpha=0.90)[0]
    resid = v - slope * x
    scatter = MAD * np.median(np.abs(resid - np.median(resid)))
    strong = _stated(r"at least " + NUMBER + " times", item["question"], 3.0)
    ratio = abs(slope * (len(v) - 1)) / scatter
    return f"{'rises' if slope > 0 else 'falls'} {'strongly' if ratio >= strong else 'slightly'}"


def seasonal_peak(item: Item) -> str:
    q = item["question"].lower()
    v = _values(item)
    stamps = pd.DatetimeIndex(pd.to_datetime(_dates(item)))
    slope = stats.theilslopes(v, np.arange(len(v)))[0]
    detrended = pd.Series(v - slope * np.arange(len(v)))
    if "month" in q:
        keys, name = stamps.month, lambda k: stamps[stamps.month == k][0].strftime("%B")
    elif "day of the week" in q:
        keys, name = stamps.weekday, lambda k: stamps[stamps.weekday == k][0].strftime("%A")
    else:
        keys, name = stamps.hour, lambda k: f"{k:02d}:00"
    groups = detrended.groupby(np.asarray(keys))
    means = groups.mean()[groups.count() >= 3]
    best = means.idxmin() if "lowest" in q else means.idxmax()
    return name(int(best))


def unusual(item: Item) -> str:
    """The value (stretch mean) farthest from the median of the `reach` values before and after it,
    both read off the question."""
    v, dates = _values(item), _dates(item)
    size = int(_stated(r"stretches of (\d+) values", item["question"], 1))
    reach = int(_stated(r"median of the (\d+) values just before", item["question"], 2))
    spans = [(s, s + size) for s in range(0, len(v) - size + 1, size) if s >= reach and s + size + reach <= len(v)]
    far = [abs(v[a:b].mean() - np.median(np.concatenate([v[a - reach:a], v[b:b + reach]]))) for a, b in spans]
    a, b = spans[int(np.argmax(far))]
    return dates[a] if size == 1 else f"{dates[a]} to {dates[b - 1]}"


def level_shift(item: Item) -> str:
    v, dates = _values(item), _dates(item)
    splits = range(5, len(v) - 4)
    t = [abs(stats.ttest_ind(v[:k], v[k:]).statistic) for k in splits]
    return dates[splits[int(np.argmax(t))]]


def _listed(item: Item) -> list[str]:
    """The names a comparison question lists, in the order of the series shown ("name: the ...; ...")."""
    listing = item["question"].split("? ", 1)[1]
    return [part.split(": the ", 1)[0].strip() for part in listing.rstrip(".").split("; ")]


def compare(item: Item) -> str:
    q = item["question"]
    measure: Callable[[np.ndarray], float]
    if "highest on average" in q:
        measure = np.mean
    elif "most variable" in q:
        measure = lambda v: float(np.std(v, ddof=1))  # noqa: E731
    else:
        measure = lambda v: abs(stats.theilslopes(v, np.arange(len(v)))[0])  # noqa: E731
    sizes = [measure(_values(item, i)) for i in range(len(item["series"]))]
    return _listed(item)[int(np.argmax(sizes))]


def correlation(item: Item) -> str:
    r = np.corrcoef(_values(item, 0), _values(item, 1))[0, 1]
    strong = _stated(r"at least " + NUMBER, item["question"], 0.6)
    weak = _stated(r"below " + NUMBER, item["question"], 0.2)
    if abs(r) < weak:
        return "no clear correlation"
    return f"{'strongly' if abs(r) >= strong else 'weakly'} {'positive' if r > 0 else 'negative'}"


def leads(item: Item) -> str:
    a, b = _values(item, 0), _values(item, 1)
    names = [s["name"] for s in item["series"]]
    found = re.search(r"up to (\d+) (\w+?)s\b", item["question"])
    max_lag, step = (int(found.group(1)), found.group(2)) if found else (5, "day")
    r = {}
    for lag in range(-max_lag, max_lag + 1):
        x, y = (a[:-lag], b[lag:]) if lag > 0 else (a[-lag:], b[:lag]) if lag < 0 else (a, b)
        r[lag] = np.corrcoef(x, y)[0, 1]
    best = max(r, key=r.__getitem__)
    first, then = (names[0], names[1]) if best >= 0 else (names[1], names[0])
    return f"{first} leads {then} by {abs(best)} {step}(s)"


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
PARTS = {2: "half", 3: "third", 4: "quarter", 5: "fifth", 6: "sixth"}


def volatility_regime(item: Item) -> str:
    v = _values(item)
    parts = int(_stated(r"cut into (\d+) equal", item["question"], 4))
    size = len(v) // parts
    spread = [np.std(np.diff(v[i * size:(i + 1) * size]), ddof=1) for i in range(parts)]
    return f"the {ORDINALS[int(np.argmax(spread))]} {PARTS[parts]}"


def most_alike(item: Item) -> str:
    """The options name records; the series after the reference are the candidates, in the item's
    `record_ids` order (the question does not list them)."""
    ref = _values(item, 0)
    r = [np.corrcoef(ref, _values(item, i))[0, 1] for i in range(1, len(item["series"]))]
    return f"record {item['metadata']['record_ids'][1 + int(np.argmax(r))]}"


STATISTICS: dict[str, Callable[[np.ndarray], float]] = {
    "range": lambda v: float(v.max() - v.min()), "standard deviation": lambda v: float(v.std()),
    "maximum": np.max, "minimum": np.min, "median": np.median, "mean": np.mean, "sum": np.sum}


def _statistic(text: str) -> Callable[[np.ndarray], float]:
    return next(f for word, f in STATISTICS.items() if text.startswith(word))


def channel_stat(item: Item) -> float:
    return float(_statistic(item["question"].removeprefix("What is the "))(_values(item)))


def compare_windows(item: Item) -> float:
    left, right = item["question"].removeprefix("What is the ").split(" minus the ")
    index = 1 if len(item["series"]) > 1 else 0
    return float(_statistic(left)(_values(item)) - _statistic(right)(_values(item, index)))


def _threshold(item: Item) -> tuple[str, float]:
    side, limit = re.search(r"\b(above|below) " + NUMBER, item["question"]).groups()  # type: ignore[union-attr]
    return side, float(limit)


def count_beyond(item: Item) -> float:
    side, limit = _threshold(item)
    v = _values(item)
    return float((v > limit).sum() if side == "above" else (v < limit).sum())


def first_day(item: Item) -> str:
    side, limit = _threshold(item)
    v = _values(item)
    hits = np.flatnonzero(v > limit if side == "above" else v < limit)
    return _dates(item)[int(hits[0])]


def change_between(item: Item) -> float:
    a, b = re.search(r"from (\S+) to (\S+) \(the later", item["question"]).groups()  # type: ignore[union-attr]
    dates, v = _dates(item), _values(item)
    return float(v[dates.index(b)] - v[dates.index(a)])


TEXT_KEYS: dict[str, Callable[[Item], str]] = {
    "trend": trend, "seasonal_peak": seasonal_peak, "unusual": unusual, "level_shift": level_shift,
    "compare": compare, "correlation": correlation, "leads": leads, "volatility_regime": volatility_regime,
    "most_alike": most_alike, "first_day": first_day}
NUMBER_KEYS: dict[str, Callable[[Item], float]] = {
    "channel_stat": channel_stat, "compare_windows": compare_windows, "count_beyond": count_beyond,
    "change_between": change_between}


def block_of(item: Item) -> str:
    return str(((item.get("metadata") or {}).get("block_call") or {}).get("block", ""))


def key_agrees(item: Item) -> bool | None:
    """Whether the key is the recomputed answer (for a number: the option nearest the recomputed
    value, within the rounding of the key's decimals); None where this script has no recomputation."""
    block, key = block_of(item), item["options"][item["answer_index"]]
    if block in TEXT_KEYS:
        return TEXT_KEYS[block](item) == key
    if block not in NUMBER_KEYS:
        return None
    value = NUMBER_KEYS[block](item)
    numbers = [_number(option) for option in item["options"]]
    nearest = int(np.argmin([abs(n - value) for n in numbers]))
    decimals = len(key.split()[0].partition(".")[2])
    return nearest == item["answer_index"] and abs(numbers[nearest] - value) <= 0.5 * 10.0 ** -decimals + 1e-9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an author run's folder (OUT/RUN_ID: report.json, templates/)")
    parser.add_argument("--handler", help="default: the run's")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    handler = args.handler or json.loads((args.run / "report.json").read_text())["handler"]
    totals = {"templates": 0, "items": 0, "recomputed": 0, "agree": 0, "disagree": 0}
    with SandboxPool(handler) as pool:
        for path in sorted((args.run / "templates").glob("*.py")):
            check = check_structure(path.read_text(), handler, num_samples=args.samples, seed=args.seed, pool=pool)
            items = [item.model_dump(mode="json") for item in check.items]
            verdicts = [key_agrees(item) for item in items]
            row = {"template": path.name, "status": str(check.status.value), "items": len(items),
                   "blocks": sorted({block_of(item) or "(no block call)" for item in items}),
                   "recomputed": sum(v is not None for v in verdicts), "agree": sum(v is True for v in verdicts),
                   "disagree": sum(v is False for v in verdicts),
                   "not_recomputed": sorted({block_of(i) or "(no block call)" for i, v in zip(items, verdicts)
                                             if v is None})}
            print(json.dumps(row), flush=True)
            totals["templates"] += 1
            for name in ("items", "recomputed", "agree", "disagree"):
                totals[name] += row[name]
    print(json.dumps({"total": totals}))


if __name__ == "__main__":
    main()
