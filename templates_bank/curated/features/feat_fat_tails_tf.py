"""True/false (Fons et al. distribution properties): are the returns fat-tailed? Bound to
synth.fat_tails: kind "fat_tailed" (Student-t, 2.0-2.8 degrees of freedom) versus "gaussian";
draws are redrawn until the tails are visible (or, for Gaussian draws, clearly absent)."""

CLAIMS = [
    ("The distribution of these daily returns is fat-tailed: extreme moves occur far more often than a normal "
     "distribution would allow.", True),
    ("These daily returns have heavy tails: a few moves are many times larger than the typical move.", True),
    ("These daily returns look normally distributed: no move is extremely large compared with the typical one "
     "(no fat tails).", False),
    ("The daily returns shown have thin, Gaussian-like tails rather than fat tails.", False),
]


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
        kind = "fat_tailed" if rng.random() < 0.5 else "gaussian"
        made = make(kind, n)
        labels = dict(made.labels)
        claim, claims_fat = CLAIMS[int(rng.integers(len(CLAIMS)))]
        fat = kind == "fat_tailed"
        if fat:
            why = f"Student-t draws with {labels['df']:.2f} degrees of freedom, scaled by {labels['scale']:.2f}"
        else:
            why = f"Gaussian draws with sd {labels['scale']:.2f}"
        items.append(tf_item(
            f"{claim} ({n} daily returns, in percent.)",
            fat == claims_fat,
            series=[series(np.round(made.values, 3), name="return", unit="%")],
            rationale=(f"Built with synth.fat_tails(kind='{kind}'): {why}; the statement is "
                       f"{'true' if fat == claims_fat else 'false'}."),
            metadata={"generator": "fat_tails", "length": n, "labels": labels, "claims_fat_tails": claims_fat},
        ))
    return items
