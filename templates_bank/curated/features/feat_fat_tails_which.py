"""Fat tails, option-bound (TimeSeriesExam style): four returns series, one drawn from a
Student-t with few degrees of freedom and three Gaussian; which one is fat-tailed? Each channel
is made by synth.fat_tails with the kind that makes its option true or false."""

NAMES = ["series 1", "series 2", "series 3", "series 4"]


def make(kind, n):
    """synth.fat_tails of `kind` (Student-t with 2.0-2.8 df for fat tails), redrawn until the tails are
    visible: some value 6+ robust sd (MAD-based) from the median for fat tails, none beyond 4 for
    Gaussian draws."""
    for _ in range(50):
        if kind == "fat_tailed":
            made = synth.fat_tails(rng, n, kind=kind, df=float(rng.uniform(2.0, 2.8)))
        else:
            made = synth.fat_tails(rng, n, kind=kind)
        x = np.asarray(made.values)
        z = np.max(np.abs(x - np.median(x))) / (1.4826 * np.median(np.abs(x - np.median(x))))
        if (kind == "fat_tailed" and z >= 6) or (kind == "gaussian" and z <= 4.0):
            return made
    return made


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(200, 301))
        fat_at = int(rng.integers(4))
        channels = []
        made_labels = []
        for j, name in enumerate(NAMES):
            kind = "fat_tailed" if j == fat_at else "gaussian"
            made = make(kind, n)
            made_labels.append(dict(made.labels))
            channels.append(series(np.round(made.values, 3), name=name, unit="%"))
        fat = made_labels[fat_at]
        items.append(mc_item(
            f"These are four series of {n} daily returns (percent). Exactly one of them comes from a fat-tailed "
            "distribution (extreme moves far more frequent than under a normal distribution); the other three are "
            "normally distributed. Which one is fat-tailed?",
            NAMES[fat_at], [nm for nm in NAMES if nm != NAMES[fat_at]],
            series=channels,
            rationale=(f"{NAMES[fat_at]} was built with synth.fat_tails(kind='fat_tailed'): Student-t with "
                       f"{fat['df']:.2f} degrees of freedom, scale {fat['scale']:.2f}; the others with "
                       "kind='gaussian' (scales " + ", ".join(f"{lab['scale']:.2f}" for j, lab in
                                                            enumerate(made_labels) if j != fat_at) + ")."),
            metadata={"generator": "fat_tails", "length": n, "labels": made_labels, "fat_tailed": NAMES[fat_at]},
        ))
    return items
