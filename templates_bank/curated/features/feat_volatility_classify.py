"""Feature classification (Fons et al.): which kind of volatility do the returns show: constant,
increasing, clustered (GARCH) or clustered with a leverage effect (GJR-GARCH)? Bound to
synth.volatility's kind; clustered and leverage paths are redrawn until the (a)symmetry is visible
(after the 30% largest moves, next-day mean squared return after falls / after rises: >= 2 for
leverage, within a factor 1.25 for clustered)."""

OPTIONS = {
    "constant": "Constant volatility: the moves are about the same size throughout",
    "increasing": "Increasing volatility: the moves get steadily larger over time",
    "clustered": ("Clustered volatility: calm and turbulent stretches alternate, and turbulence follows large "
                  "rises as much as large falls"),
    "leverage": ("Clustered volatility with a leverage effect: turbulence flares up after large falls much more "
                 "than after large rises"),
}


def after_ratio(r):
    prev = r[:-1]
    nxt = r[1:] ** 2
    big = np.abs(prev) > np.quantile(np.abs(prev), 0.7)
    return float(np.mean(nxt[big & (prev < 0)]) / np.mean(nxt[big & (prev > 0)]))


def detail(labels):
    kind = labels["kind"]
    if kind == "constant":
        return f"i.i.d. Gaussian returns, sd {labels['sigma']:.2f}"
    if kind == "increasing":
        return f"Gaussian returns whose sd rises linearly from {labels['sigma_start']:.2f} to {labels['sigma_end']:.2f}"
    if kind == "clustered":
        return f"GARCH(1,1), alpha {labels['alpha']:.2f}, beta {labels['beta']:.2f}"
    return (f"GJR-GARCH(1,1), alpha {labels['alpha']:.2f}, gamma {labels['gamma']:.2f} (after falls only), "
            f"beta {labels['beta']:.2f}")


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(220, 301))
        for _ in range(100):
            made = synth.volatility(rng, n, kind=key)
            ratio = after_ratio(np.asarray(made.values))
            if key in ("constant", "increasing") or (key == "leverage" and ratio >= 2.0) or (
                    key == "clustered" and 1 / 1.25 <= ratio <= 1.25):
                break
        labels = dict(made.labels)
        items.append(mc_item(
            f"These are {n} daily returns of an asset, in percent. Which description best fits their volatility?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(np.round(made.values, 3), name="return", unit="%")],
            rationale=f"Built with synth.volatility(kind='{key}'): {detail(labels)}.",
            metadata={"generator": "volatility", "length": n, "labels": labels, "key": key,
                      "after_fall_ratio": ratio},
        ))
    return items
