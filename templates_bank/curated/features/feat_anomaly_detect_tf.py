"""True/false (Fons et al. feature detection): does the series contain an anomaly? The series is
synth.anomaly with kind "none" or one of spike, level_shift, step (temporary plateau), dropout."""

ANOMALOUS = ["spike", "level_shift", "step", "dropout"]
CLAIMS = [
    ("This series contains an anomaly (for example a spike, a sudden level shift, a temporary plateau or a "
     "stretch of zero readings).", True),
    ("Something anomalous happens in this series: at some point it deviates sharply from its usual behaviour.", True),
    ("This series has no anomalies: every reading is ordinary noise around one steady level.", False),
    ("Nothing unusual happens in this series; it stays around the same level with ordinary noise throughout.", False),
]


def describe(labels):
    kind = labels["kind"]
    if kind == "spike":
        return f"{labels['count']} spike(s) at index(es) {labels['anomaly_indices']}, magnitudes " + ", ".join(
            f"{m:+.2f}" for m in labels["magnitudes"])
    if kind == "level_shift":
        return f"level shift of {labels['shift']:+.2f} from index {labels['start']} to the end"
    if kind == "step":
        return f"plateau of {labels['shift']:+.2f} at indexes {labels['start']}..{labels['end'] - 1}"
    if kind == "dropout":
        return f"readings of 0 at indexes {labels['start']}..{labels['end'] - 1}"
    return "no anomaly"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(80, 241))
        kind = "none" if rng.random() < 0.5 else ANOMALOUS[int(rng.integers(len(ANOMALOUS)))]
        made = synth.anomaly(rng, n, kind=kind)
        labels = dict(made.labels)
        claim, claims_anomaly = CLAIMS[int(rng.integers(len(CLAIMS)))]
        anomalous = kind != "none"
        items.append(tf_item(
            f"{claim} ({n} daily readings.)",
            anomalous == claims_anomaly,
            series=[series(np.round(made.values, 2), name="value")],
            rationale=(f"Built with synth.anomaly(kind='{kind}'): {describe(labels)} on level {labels['level']:.2f} "
                       f"with noise sd {labels['noise']:.2f}; the statement is "
                       f"{'true' if anomalous == claims_anomaly else 'false'}."),
            metadata={"generator": "anomaly", "length": n, "labels": labels, "claims_anomaly": claims_anomaly},
        ))
    return items
