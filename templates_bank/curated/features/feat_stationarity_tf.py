"""True/false (Fons et al. stationarity): is the series stationary? Bound to synth.stationarity:
kind "stationary" (AR(1) around a constant mean) versus "random_walk" (unit root) or
"trend_stationary" (a deterministic trend, so the mean changes)."""

CLAIMS = [
    ("This series is stationary: its mean and variance stay constant over time and it keeps returning to the "
     "same level.", True),
    ("This series is mean-reverting around one fixed level, with a stable spread (a stationary series).", True),
    ("This series is non-stationary: its mean drifts over time (it wanders off or follows a trend).", False),
    ("This series does not keep returning to one fixed level; its mean changes over time (non-stationary).", False),
]


def describe(labels):
    kind = labels["kind"]
    if kind == "stationary":
        return f"level {labels['level']:.2f} + AR(1) noise (phi {labels['phi']:.2f}, sd {labels['noise']:.2f})"
    if kind == "random_walk":
        return f"a random walk from {labels['level']:.2f} with Gaussian steps of sd {labels['noise']:.2f} (unit root)"
    return (f"a straight-line trend of slope {labels['slope']:+.3f} per step plus AR(1) noise (phi "
            f"{labels['phi']:.2f}, sd {labels['noise']:.2f})")


def make(kind, n):
    """synth.stationarity of `kind`; random walks are redrawn until they visibly wander (range around
    their own straight-line fit at least 14 step sd)."""
    for _ in range(50):
        made = synth.stationarity(rng, n, kind=kind)
        if kind != "random_walk":
            return made
        x = np.asarray(made.values)
        t = np.arange(n)
        resid = x - np.polyval(np.polyfit(t, x, 1), t)
        if np.max(resid) - np.min(resid) >= 14 * made.labels["noise"]:
            return made
    return made


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(150, 251))
        if rng.random() < 0.5:
            kind = "stationary"
        else:
            kind = "random_walk" if rng.random() < 0.5 else "trend_stationary"
        made = make(kind, n)
        labels = dict(made.labels)
        claim, claims_stationary = CLAIMS[int(rng.integers(len(CLAIMS)))]
        stationary = kind == "stationary"
        items.append(tf_item(
            f"{claim} ({n} daily observations.)",
            stationary == claims_stationary,
            series=[series(np.round(made.values, 2), name="value")],
            rationale=(f"Built with synth.stationarity(kind='{kind}'): {describe(labels)}; the statement is "
                       f"{'true' if stationary == claims_stationary else 'false'}."),
            metadata={"generator": "stationarity", "length": n, "labels": labels,
                      "claims_stationary": claims_stationary},
        ))
    return items
