"""Ordinary templates (what LLMs and people write) must run ok in the sandbox, unchanged.

Each template is handler-agnostic (first column of each record's series) and runs against a
user's handler file and against the built-in "synthetic" handler.
"""

from __future__ import annotations

import textwrap

import pytest

from itemsmith.items.schema import Item, RunStatus

PRELUDE = '''
def load(k=0):
    records = handler.records()
    rid = records["record_id"].iloc[k % len(records)]
    frame = handler.series(rid)
    column = frame.columns[0]
    return rid, frame, frame[column].astype(float)
'''

TEMPLATES = {
    "numpy_pandas_statistics": '''
        def question(num_samples):
            items = []
            for i in range(num_samples):
                rid, frame, s = load(int(rng.integers(0, 1000)))
                stats = {"mean": s.mean(), "std": s.std(), "median": s.median(), "max": s.max(), "min": s.min()}
                name = rng.choice(sorted(stats))
                value = float(stats[name])
                q25, q75 = np.percentile(s.to_numpy(), [25, 75])
                distractors = [f"{value + d:.2f}" for d in (abs(value) * 0.5 + 1, -abs(value) * 0.5 - 1, 2 * abs(value) + 3)]
                items.append(mc_item(f"What is the {name} of the series (IQR {q75 - q25:.2f})?", f"{value:.2f}", distractors,
                                     series=[series(s.to_numpy(), name=str(rid))], metadata={"record_id": str(rid)}))
            return items
    ''',
    "groupby_on_dates": '''
        def question(num_samples):
            items = []
            for i in range(num_samples):
                rid, frame, s = load(i)
                index = frame.index if isinstance(frame.index, pd.DatetimeIndex) else pd.date_range("2024-01-01", periods=len(s), freq="h")
                df = pd.DataFrame({"value": s.to_numpy(), "when": index})
                df["day"] = df["when"].dt.date
                df["weekday"] = df["when"].dt.day_name()
                daily = df.groupby("day")["value"].agg(["mean", "max", "count"])
                by_weekday = df.groupby("weekday").agg(total=("value", "sum"))
                resampled = df.set_index("when")["value"].resample("D").mean().dropna()
                best_day = str(daily["mean"].idxmax())
                others = [str(d) for d in daily.index if str(d) != best_day][:3] or ["none"]
                items.append(mc_item(f"Which day has the highest mean ({len(resampled)} days, {len(by_weekday)} weekdays)?",
                                     best_day, others))
            return items
    ''',
    "small_classes": '''
        class Counter2:
            def __init__(self, start=0):
                self.n = start
                self.history = []

            def bump(self, by=1):
                self.n += by
                self.history.append(self.n)
                return self

            def __repr__(self):
                return f"Counter2({self.n})"

            def __len__(self):
                return len(self.history)

        class Doubler(Counter2):
            def __init__(self):
                super().__init__(10)

            def bump(self, by=1):
                return super().bump(by * 2)

        class TemplateError(ValueError):
            def __init__(self, message, code):
                super().__init__(message)
                self.code = code

        def question(num_samples):
            c, d = Counter2(), Doubler()
            for k in range(5):
                c.bump(k)
                d.bump()
            try:
                raise TemplateError("boom", 7)
            except TemplateError as exc:
                code = exc.code
            return [tf_item(f"{c!r} has {len(c)} steps and {d.n} > {c.n} (code {code})", d.n > c.n)
                    for _ in range(num_samples)]
    ''',
    "comprehensions_and_fstrings": '''
        def question(num_samples):
            rid, frame, s = load()
            values = [float(v) for v in s.to_numpy()[:20]]
            squares = {i: v * v for i, v in enumerate(values) if i % 2 == 0}
            signs = {("+" if v >= 0 else "-") for v in values}
            pairs = [(a, b) for a, b in zip(values, values[1:]) if b > a]
            total = sum(v for v in values)
            label = "{:.1f} / {:>8.3f} / {name}".format(total, max(values), name=str(rid))
            text = f"{len(pairs)} rises, {len(squares)} squares, signs {''.join(sorted(signs))}, {total:.2f}, {label!r}"
            items = []
            for i in range(num_samples):
                k = int(rng.integers(2, 6))
                items.append(mc_item(f"[{i}] {text}: how many rises in the first {k + 1} values?",
                                     str(sum(1 for a, b in zip(values[:k], values[1:k + 1]) if b > a)),
                                     [str(k + 10), str(k + 20)]))
            return items
    ''',
    "augmented_assignment_and_containers": '''
        from collections import Counter, defaultdict, deque, namedtuple

        Point = namedtuple("Point", ["x", "y"])

        def question(num_samples):
            counts = {}
            groups = defaultdict(list)
            seen = Counter()
            window = deque(maxlen=3)
            total = 0
            rid, frame, s = load()
            for i, v in enumerate(s.to_numpy()[:30]):
                key = "up" if v > 0 else "down"
                counts[key] = counts.get(key, 0) + 1
                counts[key] += 0
                groups[key].append(i)
                seen[key] += 1
                window.append(v)
                total += v
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            data = [3, 1, 2]
            data.sort()
            data.extend([5, 4])
            data.insert(0, 9)
            data.remove(9)
            top = max(data, key=lambda x: -x)
            p = Point(1, 2)
            return [tf_item(f"{ordered[0][0]} is most common ({seen.most_common(1)[0][1]}), top={top}, p={p.x + p.y}",
                            True) for _ in range(num_samples)]
    ''',
    "random_sources": '''
        import random as pyrandom

        def question(num_samples):
            items = []
            for i in range(num_samples):
                a = int(rng.integers(1, 100))
                b = float(rng.normal(0, 1))
                c = rng.choice(["red", "green", "blue"])
                order = rng.permutation(4).tolist()
                legacy = int(np.random.randint(0, 10))
                other = np.random.default_rng(a).uniform()
                r = random.choice([1, 2, 3]) + pyrandom.randint(0, 5)
                items.append(mc_item(f"{a} {b:.3f} {c} {order} {legacy} {other:.3f} {r}: is a even?",
                                     "yes" if a % 2 == 0 else "no", ["yes" if a % 2 else "no"]))
            return items
    ''',
    "series_methods_and_spectra": '''
        def question(num_samples):
            items = []
            for i in range(num_samples):
                rid, frame, s = load(i)
                s = s.reset_index(drop=True)
                rolling = s.rolling(5, min_periods=1).mean()
                diffs = s.diff().dropna()
                pct = s.pct_change().replace([np.inf, -np.inf], np.nan).fillna(0)
                ewm = s.ewm(span=4).mean()
                shifted = s.shift(1).bfill()
                slope, intercept = np.polyfit(np.arange(len(s)), s.to_numpy(), 1)
                spectrum = np.abs(np.fft.rfft(s.to_numpy() - s.mean()))
                freqs = np.fft.rfftfreq(len(s))
                peak = float(freqs[int(np.argmax(spectrum[1:])) + 1]) if len(spectrum) > 1 else 0.0
                corr = np.corrcoef(s.to_numpy()[:-1], s.to_numpy()[1:])[0, 1]
                norm = np.linalg.norm(diffs.to_numpy())
                direction = "increasing" if slope > 0 else "decreasing"
                other = "decreasing" if direction == "increasing" else "increasing"
                items.append(mc_item(
                    f"Trend? (peak {peak:.3f}, lag-1 r {corr:.2f}, |diff| {norm:.1f}, {rolling.iloc[-1]:.2f}, "
                    f"{ewm.iloc[-1]:.2f}, {shifted.iloc[0]:.2f}, {pct.abs().max():.2f})",
                    direction, [other, "flat"], series=[series(s.to_numpy(), name="value")],
                    rationale=f"least-squares slope {slope:.4f}"))
            return items
    ''',
    "puzzle_and_true_false": '''
        def question(num_samples):
            items = []
            for i in range(num_samples):
                rid, frame, s = load(i)
                v = s.to_numpy()
                k = len(v) // 4
                if i % 2 == 0:
                    items.append(pz_item("Put the segments in order.", v[:k], [v[k:2 * k], v[2 * k:3 * k], v[3 * k:4 * k]]))
                else:
                    items.append(tf_item("The last value is above the first.", bool(v[-1] > v[0]),
                                         series=[series(v, name="value")]))
            return items
    ''',
    "imports_and_stdlib": '''
        import math
        import statistics
        import datetime
        import itertools
        import functools
        import re
        from typing import List, Dict
        import numpy as np
        import pandas as pd
        from numpy.fft import rfft

        def question(num_samples: int) -> List[Dict]:
            rid, frame, s = load()
            values = [float(x) for x in s.to_numpy()[:12]]
            med = statistics.median(values)
            sd = statistics.pstdev(values)
            when = datetime.datetime(2024, 1, 1) + datetime.timedelta(days=3)
            parsed = datetime.datetime.strptime("2024-02-03", "%Y-%m-%d")
            pairs = list(itertools.combinations(range(4), 2))
            product = functools.reduce(lambda a, b: a * b, range(1, 6))
            digits = re.findall(r"[0-9]+", "a1b22c333")
            text = f"{when:%Y-%m-%d} {parsed.date()} {math.sqrt(16):.0f} {med:.2f} {sd:.2f} {len(pairs)} {product} {digits}"
            return [tf_item(text, math.isfinite(med) and len(rfft(np.ones(4))) == 3) for _ in range(num_samples)]
    ''',
    "control_flow": '''
        LIMIT = 3

        def gen(n):
            for i in range(n):
                yield i * i

        def apply_all(fn, *args, **kwargs):
            return fn(*args, **kwargs)

        def question(num_samples):
            out = []
            i = 0
            while len(out) < num_samples:
                i += 1
                try:
                    if i % LIMIT == 0:
                        raise KeyError(i)
                    value = apply_all(max, *list(gen(i + 2)), **{"default": 0} if False else {})
                except KeyError:
                    continue
                finally:
                    pass
                a, (b, c) = i, divmod(value, 7)
                first, *rest = [a, b, c]
                if (total := first + sum(rest)) > -1:
                    out.append(tf_item(f"{i}: {value} = 7*{b}+{c}, total {total}", value == 7 * b + c))
            return out
    ''',
    "handler_aliases_and_answer_text": '''
        def question(num_samples):
            records = handler.getDataframe()
            same = handler.get_dataframe()
            rid = records["record_id"].iloc[0]
            frame = handler.query(rid)
            items = []
            for i in range(num_samples):
                answer = "yes" if len(records) == len(same) and len(frame) > 0 else "no"
                items.append({"question": f"Does {handler.name} have records? ({handler.description[:20]})",
                              "options": ["yes", "no"], "answer": answer, "kind": "mc",
                              "metadata": {"n": int(len(records))}})
            return items
    ''',
    "frame_and_array_assignment": '''
        def question(num_samples):
            rid, frame, s = load()
            df = pd.DataFrame({"v": s.to_numpy()[:10]})
            df["double"] = df["v"] * 2
            df.loc[df["v"] < 0, "double"] = 0.0
            df.iloc[0, 0] = 1.0
            df.at[1, "v"] = 2.0
            df.columns = ["value", "twice"]
            df.index.name = "step"
            df.attrs = {"source": "test"}
            col = df["value"].copy()
            col.name = "renamed"
            arr = np.zeros(5)
            arr[2] = 3.0
            arr[arr > 1] += 1
            arr[:2] = [7.0, 8.0]
            mat = np.eye(3)
            mat[1, :] = 2.0
            return [tf_item(f"{df.shape} {col.name} {arr.tolist()} {mat.sum():.0f} {df.attrs['source']}", arr[2] == 4.0)
                    for _ in range(num_samples)]
    ''',
    "derived_with_the_recipe_helper": '''
        def question(num_samples):
            items = []
            for i in range(num_samples):
                rid, frame, s = load(i)
                smooth = s.rolling(3).mean().dropna()
                how = recipe.rolling(str(frame.columns[0]), "mean", 3, unit="point")
                items.append(mc_item(f"What is the highest value of the {how}?", f"{smooth.max():.3f}",
                                     [f"{smooth.max() + d:.3f}" for d in (1, 2, 3)],
                                     series=[series(smooth.to_numpy(), name="smoothed", derived=how)]))
            return items
    ''',
    "printing": '''
        def question(num_samples):
            print("starting", num_samples)
            items = [tf_item(f"item {i}", i % 2 == 0) for i in range(num_samples)]
            print("built", len(items), "items", sep="|")
            return items
    ''',
}

SYNTH_TEMPLATE = '''
def question(num_samples):
    items = []
    for i in range(num_samples):
        kind = rng.choice(["up", "down"])
        made = synth.trend(rng, 120, kind=str(kind))
        values = np.array(made.values, dtype=float)  # a writable copy (pywt needs one)
        smooth = synth.wavelet_approximation(values)
        diffs = synth.first_difference(values)
        spectrum = synth.fourier_magnitude(values)
        label = str(made.labels["kind"])
        items.append(mc_item(f"What is the trend? ({len(smooth)}, {len(diffs)}, {len(spectrum)})", label,
                             ["up" if label != "up" else "down", "none"], series=[series(values, name="x")],
                             metadata={"labels": made.labels}))
    return items
'''


def _source(body: str) -> str:
    return PRELUDE + textwrap.dedent(body)


@pytest.fixture(params=["handler_file", "synthetic"])
def any_pool(request, pool):
    return pool if request.param == "handler_file" else request.getfixturevalue("synthetic_pool")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_ordinary_template_runs_ok(name: str, any_pool) -> None:
    result = any_pool.run(_source(TEMPLATES[name]), num_samples=4, seed=3)
    assert result.status is RunStatus.ok, f"{result.error}\n{result.traceback_tail}"
    assert len(result.items) == 4
    for raw in result.items:
        Item.model_validate(raw)


def test_same_seed_same_items_different_seed_different_items(pool) -> None:
    source = _source(TEMPLATES["random_sources"])
    a = pool.run(source, num_samples=5, seed=11)
    b = pool.run(source, num_samples=5, seed=11)
    c = pool.run(source, num_samples=5, seed=12)
    assert a.status is b.status is c.status is RunStatus.ok
    assert a.items == b.items
    assert a.items != c.items


def test_print_output_is_captured(pool) -> None:
    result = pool.run(_source(TEMPLATES["printing"]), num_samples=2)
    assert result.printed == "starting 2\nbuilt|2|items\n"


def test_synth_generators_are_available(synthetic_pool) -> None:
    result = synthetic_pool.run(SYNTH_TEMPLATE, num_samples=3, seed=5)
    assert result.status is RunStatus.ok, f"{result.error}\n{result.traceback_tail}"
    for raw in result.items:
        item = Item.model_validate(raw)
        assert item.answer == item.metadata["labels"]["kind"]


def test_synth_is_loaded_on_first_use_by_other_handlers(pool) -> None:
    """A handler-file worker imports handlers.synthetic only when a template names synth."""
    result = pool.run(SYNTH_TEMPLATE, num_samples=2, seed=1)
    assert result.status is RunStatus.ok, f"{result.error}\n{result.traceback_tail}"
    again = pool.run(SYNTH_TEMPLATE, num_samples=2, seed=1)
    assert again.items == result.items


def test_the_recipe_helper_is_read_only(pool) -> None:
    result = pool.run("def question(num_samples):\n    recipe.rolling = None\n    return []\n", num_samples=1)
    assert result.status is RunStatus.error and "cannot modify" in (result.error or "")
