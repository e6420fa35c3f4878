"""True or false: past values of one series help predict the other (Granger causality; TimeSeriesExam
causality). The pair comes from `synth.granger_pair` with direction x->y, y->x or none; the
statement is true exactly when the generator's cause is the series the statement names."""

DIRECTIONS = ["x->y", "y->x", "none"]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(150, 301))
        # True and False equally often: a true statement names the real cause; a false one
        # names the effect of a causal pair or either series of an independent pair
        is_true = bool(rng.random() < 0.5)
        direction = DIRECTIONS[int(rng.integers(2 if is_true else 3))]
        made = synth.granger_pair(rng, n, direction=direction)
        labels = made.labels
        if direction == "none":
            cause = "x" if rng.random() < 0.5 else "y"
        else:
            cause = labels["cause"] if is_true else labels["effect"]
        effect = "y" if cause == "x" else "x"
        if direction == "none":
            truth = "the two series are independent AR(1) processes"
        else:
            truth = (f"{labels['effect']}[t] depends on {labels['cause']}[t-{labels['lag']}] with coefficient "
                     f"{labels['coefficient']:.2f}, and not the other way round")
        items.append(tf_item(
            f"Series x and y are two synthetic daily series ({n} days). True or false: {cause} Granger-causes "
            f"{effect}, i.e. past values of {cause} help predict {effect} beyond what {effect}'s own past already tells.",
            is_true,
            series=[series(made.values[:, 0], name="x"), series(made.values[:, 1], name="y")],
            rationale=f"Generated with synth.granger_pair(direction='{direction}'): {truth}.",
            metadata={"generator": "granger_pair", "direction": direction, "statement": f"{cause}->{effect}",
                      "length": n, "labels": labels},
        ))
    return items
