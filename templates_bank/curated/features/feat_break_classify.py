"""Feature classification (Fons et al.): which kind of structural break does the series have: a
jump in level, a change of slope, a change of variance, or none? Bound to
synth.structural_break's kind."""

OPTIONS = {
    "level": "A sudden jump in the mean level, with the same amount of noise before and after",
    "trend": "A change of slope: the trend bends at one point (for example rising then falling, or flat then rising)",
    "variance": ("A change of variance: at one point the fluctuations become much larger or smaller around the same "
                 "mean"),
    "none": "No structural break: the same level and the same amount of noise throughout",
}


def detail(labels):
    kind = labels["kind"]
    if kind == "level":
        return f"mean {labels['level_before']:.2f} -> {labels['level_after']:.2f} at index {labels['break_index']}"
    if kind == "trend":
        return (f"slope {labels['slope_before']:+.3f} -> {labels['slope_after']:+.3f} per step at index "
                f"{labels['break_index']}")
    if kind == "variance":
        return f"noise sd {labels['sigma_before']:.2f} -> {labels['sigma_after']:.2f} at index {labels['break_index']}"
    return f"level {labels['level']:.2f}, noise sd {labels['noise']:.2f}"


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(100, 241))
        made = synth.structural_break(rng, n, kind=key)
        labels = dict(made.labels)
        items.append(mc_item(
            f"These are {n} daily observations of a series. Which description best fits it?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(np.round(made.values, 2), name="value")],
            rationale=f"Built with synth.structural_break(kind='{key}'): {detail(labels)}.",
            metadata={"generator": "structural_break", "length": n, "labels": labels, "key": key},
        ))
    return items
