"""Feature classification (Fons et al. cross-correlation): positive or negative, same-time (direct)
or lagged? Bound to synth.lagged_pair with kind positive/negative and lag 0 (direct) or 3-10."""

OPTIONS = {
    ("positive", False): "Positive, same-time: y rises and falls together with x on the same days",
    ("positive", True): "Positive, lagged: y repeats the movements of x a few days later",
    ("negative", False): "Negative, same-time: y moves opposite to x on the same days",
    ("negative", True): "Negative, lagged: a few days after x moves, y moves the opposite way",
}


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        sign, lagged = key
        n = int(rng.integers(100, 201))
        lag = int(rng.integers(3, 11)) if lagged else 0
        made = synth.lagged_pair(rng, n, kind=sign, lag=lag)
        labels = dict(made.labels)
        vals = np.round(made.values, 2)
        items.append(mc_item(
            f"Two daily series x and y are observed over the same {n} days. Which description best fits how y relates "
            "to x?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(vals[:, 0], name="x"), series(vals[:, 1], name="y")],
            rationale=(f"Built with synth.lagged_pair(kind='{sign}', lag={lag}): y[t] = rho * x[t - {lag}] + noise "
                       f"(after standardizing) with rho = {labels['rho']:+.2f}; x is an AR(1) with phi "
                       f"{labels['phi']:.2f}."),
            metadata={"generator": "lagged_pair", "length": n, "labels": labels, "key": [sign, lagged]},
        ))
    return items
