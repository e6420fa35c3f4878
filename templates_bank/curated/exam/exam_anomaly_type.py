"""What kind of anomaly does the series contain (TimeSeriesExam anomaly detection). The series comes
from `synth.anomaly` with the keyed kind: an isolated spike, a lasting level shift, a temporary
plateau (step), a dropout to zero, or a contextual anomaly in a seasonal series."""

DESCRIPTIONS = {
    "spike": "A single isolated spike: one reading far from all its neighbours",
    "level_shift": "A level shift: the level jumps once and stays at the new level until the end",
    "step": "A temporary plateau: the level jumps for a short stretch, then returns to normal",
    "dropout": "A dropout: a short run of readings that are exactly zero",
    "contextual": "A contextual anomaly: one reading with a normal value overall, but wrong for its place in the cycle",
}


def question(num_samples):
    items = []
    kinds = list(DESCRIPTIONS)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(80, 241))
        made = synth.anomaly(rng, n, kind=kind, count=1) if kind == "spike" else synth.anomaly(rng, n, kind=kind)
        labels = made.labels
        first, last = labels["anomaly_indices"][0], labels["anomaly_indices"][-1]
        wrong = [DESCRIPTIONS[k] for k in kinds if k != kind]
        items.append(mc_item(
            f"This synthetic sensor series ({n} readings, one per day) contains exactly one anomaly. "
            "What kind of anomaly is it?",
            DESCRIPTIONS[kind], wrong,
            series=[series(made.values, name="reading")],
            rationale=(f"Generated with synth.anomaly(kind='{kind}'), affecting index {first}"
                       + (f" to {last}" if last != first else "") + f"; noise sd {labels['noise']:.2f}."),
            metadata={"generator": "anomaly", "kind": kind, "length": n, "labels": labels},
        ))
    return items
