"""True/false (Fons et al. feature detection): does the series show seasonality? The series is
synth.seasonality with kind "none" or one of the seasonal kinds (fixed, varying amplitude,
shifting period, multiple)."""

SEASONAL = ["fixed", "varying_amplitude", "shifting", "multiple"]
CLAIMS = [
    ("This series shows seasonality: a pattern that repeats in cycles.", True),
    ("This series contains a recurring cyclical (seasonal) pattern.", True),
    ("This series has no seasonality: nothing in it repeats in cycles.", False),
    ("There is no repeating cycle in this series, only irregular noise around a constant level.", False),
]


def describe(labels):
    kind = labels["kind"]
    if kind == "fixed":
        return f"one cycle of period {labels['period']:.0f} days, amplitude {labels['amplitude']:.2f}"
    if kind == "varying_amplitude":
        return (f"one cycle of period {labels['period']:.0f} days, amplitude {labels['amplitude_start']:.2f} to "
                f"{labels['amplitude_end']:.2f}")
    if kind == "shifting":
        return f"a cycle whose period drifts from {labels['period_start']:.1f} to {labels['period_end']:.1f} days"
    if kind == "multiple":
        return "two cycles of periods " + " and ".join(f"{p:.0f}" for p in labels["periods"]) + " days"
    return "no seasonal component"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(80, 241))
        kind = "none" if rng.random() < 0.5 else SEASONAL[int(rng.integers(len(SEASONAL)))]
        made = synth.seasonality(rng, n, kind=kind)
        labels = dict(made.labels)
        claim, claims_seasonal = CLAIMS[int(rng.integers(len(CLAIMS)))]
        seasonal = kind != "none"
        items.append(tf_item(
            f"{claim} ({n} daily observations.)",
            seasonal == claims_seasonal,
            series=[series(np.round(made.values, 2), name="value")],
            rationale=(f"Built with synth.seasonality(kind='{kind}'): {describe(labels)}, noise sd "
                       f"{labels['noise']:.2f}; the statement is "
                       f"{'true' if seasonal == claims_seasonal else 'false'}."),
            metadata={"generator": "seasonality", "length": n, "labels": labels,
                      "claims_seasonal": claims_seasonal},
        ))
    return items
