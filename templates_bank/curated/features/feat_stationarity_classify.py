"""Feature classification (Fons et al. stationarity): stationary, random walk (unit root) or
trend-stationary? Bound to synth.stationarity's kind; random walks are redrawn until they
visibly wander. synth.stationarity checks its draws with the ADF test only; a draw is kept here
only when the KPSS tests agree by a margin too, at a short and a long bandwidth (with ADF alone a
KPSS reader called ~1 in 6 random walks level-stationary)."""

# KPSS critical values (Kwiatkowski et al. 1992): level (c) and trend (ct), at 10% and 1%
KPSS_10 = {"c": 0.347, "ct": 0.119}
KPSS_1 = {"c": 0.739, "ct": 0.216}

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


def kpss(x, regression, lags):
    """The KPSS statistic of x around a constant ("c") or a line ("ct"), Bartlett long-run variance."""
    n = len(x)
    t = np.arange(n)
    design = np.ones((n, 1)) if regression == "c" else np.column_stack([np.ones(n), t])
    resid = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    long_run = float(resid @ resid) / n
    for j in range(1, lags + 1):
        long_run += 2 * (1 - j / (lags + 1)) * float(resid[j:] @ resid[:-j]) / n
    return float(np.sum(np.cumsum(resid) ** 2) / (n * n * long_run))


def kpss_clear(kind, x):
    """Whether KPSS shows `kind` by a margin at both a short and a long bandwidth: random walks
    reject level and trend stationarity at 1%, stationary series keep level stationarity at 10%,
    trend-stationary ones keep trend stationarity at 10% and reject level stationarity at 1%."""
    n = len(x)
    for lags in (int(4 * (n / 100) ** 0.25), int(12 * (n / 100) ** 0.25)):
        level, trend = kpss(x, "c", lags), kpss(x, "ct", lags)
        if kind == "random_walk" and not (level > KPSS_1["c"] and trend > KPSS_1["ct"]):
            return False
        if kind == "stationary" and not level < KPSS_10["c"]:
            return False
        if kind == "trend_stationary" and not (trend < KPSS_10["ct"] and level > KPSS_1["c"]):
            return False
    return True


def make(kind, n):
    """synth.stationarity of `kind`, redrawn until KPSS agrees (kpss_clear) and, for random walks,
    until they visibly wander (range around their own straight-line fit at least 14 step sd)."""
    for _ in range(200):
        made = synth.stationarity(rng, n, kind=kind)
        x = np.asarray(made.values)
        if not kpss_clear(kind, x):
            continue
        if kind != "random_walk":
            return made
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
