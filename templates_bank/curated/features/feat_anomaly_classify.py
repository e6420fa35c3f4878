"""Feature classification (Fons et al.): which kind of anomaly does the series contain? Bound to
synth.anomaly's kind: spike, level shift, temporary plateau (step), drop-out, or a contextual
anomaly in a seasonal series."""

OPTIONS = {
    "spike": "One or a few isolated spikes: single readings far above or below their neighbours",
    "level_shift": "A level shift: the series jumps to a new level and stays there until the end",
    "step": "A temporary plateau: a short stretch shifted well up or down, then back to the usual level",
    "dropout": "A drop-out: a short stretch of readings at exactly 0, as if data were missing",
    "contextual": ("A contextual anomaly: within a regular cycle, one reading takes a value that is normal for "
                   "the series but wrong for its place in the cycle"),
}


def detail(labels):
    kind = labels["kind"]
    if kind == "spike":
        return f"{labels['count']} spike(s) at index(es) {labels['anomaly_indices']}"
    if kind == "level_shift":
        return f"shift {labels['shift']:+.2f} from index {labels['start']}"
    if kind == "step":
        return f"plateau {labels['shift']:+.2f} at indexes {labels['start']}..{labels['end'] - 1}"
    if kind == "dropout":
        return f"zeros at indexes {labels['start']}..{labels['end'] - 1}"
    return (f"cycle of period {labels['period']:.0f}, amplitude {labels['amplitude']:.2f}; index "
            f"{labels['anomaly_indices'][0]} expected {labels['expected_value']:.2f}, off by "
            f"{labels['magnitude']:+.2f}")


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(100, 241))
        made = synth.anomaly(rng, n, kind=key)
        labels = dict(made.labels)
        items.append(mc_item(
            f"These are {n} daily readings of a sensor. Which kind of anomaly does the series contain?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(np.round(made.values, 2), name="value")],
            rationale=(f"Built with synth.anomaly(kind='{key}'): {detail(labels)}; level {labels['level']:.2f}, "
                       f"noise sd {labels['noise']:.2f}."),
            metadata={"generator": "anomaly", "length": n, "labels": labels, "key": key},
        ))
    return items
