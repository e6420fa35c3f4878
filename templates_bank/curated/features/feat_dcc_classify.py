"""Feature classification (Fons et al. dynamic conditional correlation): how does the correlation of
x and y change over time? Bound to synth.dcc_pair's kind (one switch at 30-70% of the series)."""

OPTIONS = {
    "positive_to_negative": "Positively correlated in the first part, negatively correlated in the second part",
    "negative_to_positive": "Negatively correlated in the first part, positively correlated in the second part",
    "correlated_to_uncorrelated": "Strongly correlated in the first part, unrelated in the second part",
    "uncorrelated_to_correlated": "Unrelated in the first part, strongly correlated in the second part",
}


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(160, 261))
        made = synth.dcc_pair(rng, n, kind=key)
        labels = dict(made.labels)
        vals = np.round(made.values, 2)
        items.append(mc_item(
            f"Two daily series x and y are observed over the same {n} days. At one point their relationship "
            "changes. Which description fits?",
            OPTIONS[key], [OPTIONS[k] for k in keys if k != key],
            series=[series(vals[:, 0], name="x"), series(vals[:, 1], name="y")],
            rationale=(f"Built with synth.dcc_pair(kind='{key}'): correlation {labels['rho_before']:+.2f} before index "
                       f"{labels['change_index']} and {labels['rho_after']:+.2f} from it on."),
            metadata={"generator": "dcc_pair", "length": n, "labels": labels, "key": key},
        ))
    return items
