"""True/false (Fons et al. feature detection): does the series have a structural break? The series
is synth.structural_break with kind "none" or a break in level, slope (trend) or variance."""

BREAKS = ["level", "trend", "variance"]
CLAIMS = [
    ("This series has a structural break: at some point the process generating it changes (its level, its "
     "slope or its variability).", True),
    ("At one point the behaviour of this series changes (its level, slope or variability), and a different "
     "regime holds from then on.", True),
    ("This series has no structural break: the same level, slope and variability hold throughout.", False),
    ("The series follows one and the same regime from start to end, with no change in level, slope or "
     "variability.", False),
]


def describe(labels):
    kind = labels["kind"]
    if kind == "level":
        return f"mean {labels['level_before']:.2f} -> {labels['level_after']:.2f} at index {labels['break_index']}"
    if kind == "trend":
        return (f"slope {labels['slope_before']:+.3f} -> {labels['slope_after']:+.3f} per step at index "
                f"{labels['break_index']}")
    if kind == "variance":
        return f"noise sd {labels['sigma_before']:.2f} -> {labels['sigma_after']:.2f} at index {labels['break_index']}"
    return f"level {labels['level']:.2f} with noise sd {labels['noise']:.2f} throughout"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 241))
        kind = "none" if rng.random() < 0.5 else BREAKS[int(rng.integers(len(BREAKS)))]
        made = synth.structural_break(rng, n, kind=kind)
        labels = dict(made.labels)
        claim, claims_break = CLAIMS[int(rng.integers(len(CLAIMS)))]
        has_break = kind != "none"
        items.append(tf_item(
            f"{claim} ({n} daily observations.)",
            has_break == claims_break,
            series=[series(np.round(made.values, 2), name="value")],
            rationale=(f"Built with synth.structural_break(kind='{kind}'): {describe(labels)}; the statement is "
                       f"{'true' if has_break == claims_break else 'false'}."),
            metadata={"generator": "structural_break", "length": n, "labels": labels, "claims_break": claims_break},
        ))
    return items
