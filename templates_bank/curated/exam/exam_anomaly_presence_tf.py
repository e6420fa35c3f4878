"""True or false: the series contains an anomaly (TimeSeriesExam anomaly detection).

True items come from `synth.anomaly` with kind spike / step / dropout / level_shift, false
items from `synth.anomaly(kind="none")` (level plus noise only)."""

ANOMALOUS = ["spike", "step", "dropout", "level_shift"]


def daily_dates(n):
    start = datetime.date(2020, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 1500)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(80, 241))
        has = bool(rng.random() < 0.5)
        kind = ANOMALOUS[int(rng.integers(len(ANOMALOUS)))] if has else "none"
        made = synth.anomaly(rng, n, kind=kind, count=1) if kind == "spike" else synth.anomaly(rng, n, kind=kind)
        labels = made.labels
        stamps = daily_dates(n)
        where = ""
        if has:
            first, last = labels["anomaly_indices"][0], labels["anomaly_indices"][-1]
            where = f": a {kind.replace('_', ' ')} at index {first}" + (f" to {last}" if last != first else "") + \
                f" ({stamps[first]})"
        items.append(tf_item(
            f"This synthetic sensor series has one reading per day ({stamps[0]} to {stamps[-1]}); normally it "
            "fluctuates randomly around a steady level. True or false: it contains an anomaly (an isolated spike, "
            "a temporary jump or dip, a run of zero readings, or a sudden lasting shift in level).",
            has,
            series=[series(made.values, name="reading", timestamps=stamps)],
            rationale=f"Generated with synth.anomaly(kind='{kind}'){where}; noise sd {labels['noise']:.2f}.",
            metadata={"generator": "anomaly", "kind": kind, "length": n, "labels": labels},
        ))
    return items
