"""Feature classification (Fons et al. stationarity): stationary, random walk (unit root) or
trend-stationary? Bound to synth.stationarity's kind; random walks are redrawn until they
visibly wander."""

OPTIONS = {
    "stationary": "Stationary: it fluctuates around one constant mean with a stable spread and keeps returning to it",
    "random_walk": "A random walk (unit root): it wanders without any tendency to return to a fixed level or line",
    "trend_stationary": ("Trend-stationary: it fluctuates around a straight-line trend and keeps returning to that "
                         "line"),
}


def detail(labels):
    kind = labels["kind"]
    if kind == "stationary":
        return f"level {labels['level']:.2f} + AR(1) noise (phi {labels['phi']:.2f}, sd {labels['noise']:.2f})"
    if kind == "random_walk":
        return f"random walk from {labels['level']:.2f}, Gaussian steps of sd {labels['noise']:.2f}"
    return (f"line of slope {labels['slope']:+.3f} per step + AR(1) noise (phi {labels['phi']:.2f}, sd "
            f"{labels['noise']:.2f})")


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
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(150, 251))
        made = make(key, n)
        labels = dict(made.labels)
        items.append(mc_item(
            f"These are {n} daily observations of a series. Which description fits it best?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(np.round(made.values, 2), name="value")],
            rationale=f"Built with synth.stationarity(kind='{key}'): {detail(labels)}.",
            metadata={"n_options": 3, "generator": "stationarity", "length": n, "labels": labels, "key": key},
        ))
    return items
