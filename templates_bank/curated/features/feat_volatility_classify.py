"""Feature classification (Fons et al.): which kind of volatility do the returns show: constant,
increasing, clustered (GARCH) or clustered with a leverage effect (GJR-GARCH)? Bound to
synth.volatility's kind; clustered and leverage paths are redrawn until the (a)symmetry is visible
(after the 30% largest moves, next-day mean squared return after falls / after rises: >= 2 for
leverage, within a factor 1.25 for clustered), and every draw must show its kind on two more
statistics by a margin: the trend of the move sizes (OLS t of |return| on time: below 1 in size for
constant, below 1.5 for the clustered kinds, above 5 for increasing) and Engle's ARCH-LM statistic
(5 lags: p > 0.25 for constant, p < 1e-4 for the clustered kinds), and the clustered kinds a
second asymmetry measure, the correlation of r[t-1] with r[t]^2 (below -0.15 for leverage, within
0.05 of zero for clustered). Without them an ARCH-LM and
trend reader disagreed with ~1 key in 15 (a GARCH path with a calm start looks increasing, a weak
one constant)."""

ARCH_QUIET, ARCH_CLEAR = 6.63, 25.74  # chi2(5) at p = 0.25 and p = 1e-4

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


def size_trend_t(r):
    """OLS t-statistic of |r| on time."""
    t = np.arange(len(r), dtype=float)
    y = np.abs(r)
    design = np.column_stack([np.ones_like(t), t])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    resid = y - design @ coef
    se = np.sqrt(resid @ resid / (len(y) - 2) / np.sum((t - t.mean()) ** 2))
    return float(coef[1] / se)


def arch_lm(r, lags=5):
    """Engle's LM statistic: n R^2 of r_t^2 on its first `lags` lags."""
    sq = (r - r.mean()) ** 2
    y = sq[lags:]
    design = np.column_stack([np.ones(len(y))] + [sq[lags - j:len(sq) - j] for j in range(1, lags + 1)])
    resid = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    return float(len(y) * (1 - resid.var() / y.var()))


def shows(kind, r):
    """Whether the returns show `kind` by the margins above."""
    ratio, trend, arch = after_ratio(r), size_trend_t(r), arch_lm(r)
    lead = float(np.corrcoef(r[:-1], r[1:] ** 2)[0, 1])
    if kind == "constant":
        return abs(trend) < 1.0 and arch < ARCH_QUIET
    if kind == "increasing":
        return trend > 5.0
    clustered = abs(trend) < 1.5 and arch > ARCH_CLEAR
    if kind == "leverage":
        return clustered and ratio >= 2.0 and lead < -0.15
    return clustered and 1 / 1.25 <= ratio <= 1.25 and abs(lead) < 0.05


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
        for _ in range(300):
            made = synth.volatility(rng, n, kind=key)
            if shows(key, np.asarray(made.values)):
                break
        ratio = after_ratio(np.asarray(made.values))
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
