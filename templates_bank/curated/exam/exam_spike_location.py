"""Where is the spike: which date range or index range holds the one anomalous point (TimeSeriesExam
anomaly detection). `synth.anomaly(kind="spike", count=1)` places the spike; half of the items
add a slow seasonal cycle (`synth.sine`) underneath so the spike must be judged against its
neighbours. Options are the equal-width windows the series is cut into."""


def daily_dates(n):
    start = datetime.date(2019, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 2000)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(80, 241))
        k = int(rng.integers(4, 6))
        made = synth.anomaly(rng, n, kind="spike", count=1)
        labels = made.labels
        spike = labels["anomaly_indices"][0]
        seasonal = bool(rng.random() < 0.5)
        values = made.values
        if seasonal:
            cycle = synth.sine(rng, n, period=float(rng.integers(24, max(25, n // 3) + 1)),
                               amplitude=float(rng.uniform(2.0, 4.0)) * labels["noise"])
            values = synth.add(made, cycle).values
        edges = [int(round(i * n / k)) for i in range(k + 1)]
        by_date = bool(rng.random() < 0.5)
        stamps = daily_dates(n)
        options = []
        for i in range(k):
            lo, hi = edges[i], edges[i + 1] - 1
            options.append(f"{stamps[lo]} to {stamps[hi]}" if by_date else f"samples {lo} to {hi}")
        keyed = [i for i in range(k) if edges[i] <= spike < edges[i + 1]][0]
        channel = series(values, name="reading", timestamps=stamps) if by_date else series(values, name="reading")
        where = "date range" if by_date else "range of sample indices (0-based)"
        items.append(mc_item(
            f"This synthetic daily sensor series ({n} readings) contains exactly one spike: a single reading far "
            f"from its neighbours. In which {where} is the spike?",
            options[keyed], [o for i, o in enumerate(options) if i != keyed],
            series=[channel],
            rationale=(f"synth.anomaly placed one spike of {labels['magnitudes'][0]:+.1f} ("
                       f"{abs(labels['magnitudes'][0]) / labels['noise']:.1f} noise sd) at index {spike} "
                       f"({stamps[spike]})" + (", on top of a slow sine cycle" if seasonal else "") + "."),
            metadata={"generator": "anomaly", "kind": "spike", "spike_index": spike, "spike_date": stamps[spike],
                      "windows": k, "seasonal": seasonal, "length": n, "labels": labels},
        ))
    return items
