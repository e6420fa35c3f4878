"""True/false (Fons et al. feature detection): does a returns series show volatility clustering?
Bound to synth.volatility: kind "clustered" (GARCH(1,1)) or "leverage" (GJR-GARCH) for clustering,
"constant" (i.i.d. Gaussian) for none."""

CLAIMS = [
    ("These daily returns show volatility clustering: calm stretches alternate with turbulent stretches, "
     "large moves tending to follow large moves.", True),
    ("The volatility of these daily returns comes in clusters (periods of big swings and periods of small ones).",
     True),
    ("These daily returns have constant volatility: the typical size of the moves is the same throughout, "
     "with no calm or turbulent stretches.", False),
    ("There is no volatility clustering in these daily returns: big moves are scattered at random, not bunched "
     "together.", False),
]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(200, 301))
        if rng.random() < 0.5:
            kind = "constant"
        else:
            kind = "clustered" if rng.random() < 0.5 else "leverage"
        made = synth.volatility(rng, n, kind=kind)
        labels = dict(made.labels)
        claim, claims_clusters = CLAIMS[int(rng.integers(len(CLAIMS)))]
        clustered = kind != "constant"
        if kind == "constant":
            why = f"i.i.d. Gaussian returns with sd {labels['sigma']:.2f}"
        else:
            why = (f"{'GJR-' if kind == 'leverage' else ''}GARCH(1,1) with alpha {labels['alpha']:.2f}, beta "
                   f"{labels['beta']:.2f}" + (f", gamma {labels['gamma']:.2f}" if kind == "leverage" else "")
                   + ", so large moves raise the next days' variance")
        items.append(tf_item(
            f"{claim} ({n} daily returns, in percent.)",
            clustered == claims_clusters,
            series=[series(np.round(made.values, 3), name="return", unit="%")],
            rationale=(f"Built with synth.volatility(kind='{kind}'): {why}; the statement is "
                       f"{'true' if clustered == claims_clusters else 'false'}."),
            metadata={"generator": "volatility", "length": n, "labels": labels, "claims_clustering": claims_clusters},
        ))
    return items
