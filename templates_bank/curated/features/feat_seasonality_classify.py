"""Feature classification (Fons et al.): which kind of seasonality does the series show: fixed,
varying amplitude, shifting period, multiple cycles, or none? Bound to synth.seasonality's kind."""

OPTIONS = {
    "fixed": "A single seasonal cycle with a fixed period and a constant amplitude",
    "varying_amplitude": "A single seasonal cycle with a fixed period whose amplitude steadily grows or shrinks",
    "shifting": "A seasonal cycle whose period drifts: successive cycles get steadily longer or shorter",
    "multiple": "Two overlapping seasonal cycles with clearly different periods (multiple seasonality)",
    "none": "No seasonality: irregular noise around a constant level",
}


def make(kind, n):
    if kind in ("fixed", "varying_amplitude"):
        return synth.seasonality(rng, n, kind=kind, period=float(rng.integers(6, n // 6 + 1)))
    if kind == "shifting":
        short = float(rng.uniform(max(6.0, n / 25), n / 10))
        pair = [short, short * float(rng.uniform(2.2, 2.8))]
        if rng.random() < 0.5:
            pair = [pair[1], pair[0]]
        return synth.seasonality(rng, n, kind=kind, periods=pair)
    if kind == "multiple":
        short = int(rng.integers(5, n // 15 + 1))
        return synth.seasonality(rng, n, kind=kind, periods=[short, int(rng.integers(int(3.5 * short), n // 3 + 1))])
    return synth.seasonality(rng, n, kind="none")


def detail(labels):
    kind = labels["kind"]
    if kind == "fixed":
        return f"period {labels['period']:.0f} days, amplitude {labels['amplitude']:.2f}"
    if kind == "varying_amplitude":
        return (f"period {labels['period']:.0f} days, amplitude {labels['amplitude_trend']} from "
                f"{labels['amplitude_start']:.2f} to {labels['amplitude_end']:.2f}")
    if kind == "shifting":
        return f"period drifting from {labels['period_start']:.1f} to {labels['period_end']:.1f} days"
    if kind == "multiple":
        return "periods " + " and ".join(f"{p:.0f}" for p in labels["periods"]) + " days"
    return "no seasonal component"


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(120, 241))
        made = make(key, n)
        labels = dict(made.labels)
        items.append(mc_item(
            f"These are {n} daily observations of a series. Which description best fits its seasonal behaviour?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(np.round(made.values, 2), name="value")],
            rationale=f"Built with synth.seasonality(kind='{key}'): {detail(labels)}, noise sd {labels['noise']:.2f}.",
            metadata={"generator": "seasonality", "length": n, "labels": labels, "key": key},
        ))
    return items
