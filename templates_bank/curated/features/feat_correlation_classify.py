"""Feature classification (Fons et al. multivariate correlation): are x and y positively correlated,
negatively correlated, or uncorrelated? Bound to synth.correlated_pair's kind."""

OPTIONS = {
    "positive": "Positively correlated: they tend to be high together and low together",
    "negative": "Negatively correlated: when one is high the other tends to be low",
    "none": "Uncorrelated: there is no linear relationship between them",
}
PAIRS = [("sensor A", "sensor B"), ("asset 1 return", "asset 2 return"), ("x", "y"), ("series 1", "series 2")]


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(100, 201))
        made = synth.correlated_pair(rng, n, kind=key)
        labels = dict(made.labels)
        a, b = PAIRS[int(rng.integers(len(PAIRS)))]
        vals = np.round(made.values, 2)
        items.append(mc_item(
            f"Two daily series, '{a}' and '{b}', are observed over the same {n} days. Which description fits their "
            "relationship?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(vals[:, 0], name=a), series(vals[:, 1], name=b)],
            rationale=(f"Built with synth.correlated_pair(kind='{key}'): the two series share a common Gaussian "
                       f"factor with correlation rho = {labels['rho']:+.2f}."),
            metadata={"n_options": 3, "generator": "correlated_pair", "length": n, "labels": labels, "key": key, "names": [a, b]},
        ))
    return items
