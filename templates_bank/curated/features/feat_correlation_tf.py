"""True/false (Fons et al. multivariate feature detection): is a stated correlation between two
series present? Bound to synth.correlated_pair's kind (positive, negative or none); the
statement names one of the three relationships and is true exactly when it names the kind."""

STATEMENTS = {
    "positive": "'{a}' and '{b}' are positively correlated: they tend to be high together and low together.",
    "negative": "'{a}' and '{b}' are negatively correlated: when one is high, the other tends to be low.",
    "none": "'{a}' and '{b}' are uncorrelated: there is no linear relationship between them.",
}
PAIRS = [("sensor A", "sensor B"), ("asset 1 return", "asset 2 return"), ("x", "y"), ("series 1", "series 2")]


def question(num_samples):
    items = []
    kinds = list(STATEMENTS)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(3))]
        stated = kind if rng.random() < 0.5 else [k for k in kinds if k != kind][int(rng.integers(2))]
        n = int(rng.integers(100, 201))
        made = synth.correlated_pair(rng, n, kind=kind)
        labels = dict(made.labels)
        a, b = PAIRS[int(rng.integers(len(PAIRS)))]
        vals = np.round(made.values, 2)
        items.append(tf_item(
            STATEMENTS[stated].format(a=a, b=b) + f" ({n} daily observations of each.)",
            stated == kind,
            series=[series(vals[:, 0], name=a), series(vals[:, 1], name=b)],
            rationale=(f"Built with synth.correlated_pair(kind='{kind}'), rho = {labels['rho']:+.2f}; the statement "
                       f"claims '{stated}', so it is {'true' if stated == kind else 'false'}."),
            metadata={"generator": "correlated_pair", "length": n, "labels": labels, "stated": stated,
                      "names": [a, b]},
        ))
    return items
