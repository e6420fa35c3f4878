"""Which way does Granger causality run between two series (TimeSeriesExam causality). Every option
is a direction of `synth.granger_pair` (x->y, y->x, none); the keyed one generated the pair.
The series are shown under neutral names (A and B, in random roles).

A draw is kept only when its direction is clear to any usual Granger test: at every lag order 1-8
the F-test of a denied direction stays below its 25% critical value (p > 0.25), and at every
order from the true lag to 5 the claimed one is far beyond its 0.0001% one. (synth.granger_pair's own check denies a direction at p > 0.01,
so a reader testing at 5% with another lag order still found spurious causality in ~8% of the
items.)"""

LAGS = (1, 2, 3, 4, 5, 6, 7, 8)
# upper quantiles of F(k, infinity) = chi2(k) / k: above 75% (p < 0.25) and above 1 - 1e-6
F_QUIET = {1: 1.323, 2: 1.386, 3: 1.369, 4: 1.346, 5: 1.325, 6: 1.307, 7: 1.291, 8: 1.277}
F_CLEAR = {1: 23.93, 2: 13.82, 3: 10.26, 4: 8.38, 5: 7.22}


def granger_f(cause, effect, k):
    """F statistic of adding k lags of `cause` to an AR(k) regression of `effect` (with a constant)."""
    n = len(effect)
    y = effect[k:]
    own = [effect[k - j:n - j] for j in range(1, k + 1)]
    other = [cause[k - j:n - j] for j in range(1, k + 1)]
    small = np.column_stack([np.ones(n - k)] + own)
    big = np.column_stack([small] + other)
    rss_small = float(np.sum((y - small @ np.linalg.lstsq(small, y, rcond=None)[0]) ** 2))
    rss_big = float(np.sum((y - big @ np.linalg.lstsq(big, y, rcond=None)[0]) ** 2))
    return ((rss_small - rss_big) / k) / (rss_big / (n - k - big.shape[1]))


def clear(values, labels):
    """Whether every lag order shows the labelled direction with the margins above."""
    x, y = values[:, 0], values[:, 1]
    x_to_y = [granger_f(x, y, k) for k in LAGS]
    y_to_x = [granger_f(y, x, k) for k in LAGS]

    def quiet(fs):
        return all(f < F_QUIET[k] for k, f in zip(LAGS, fs))

    def strong(fs):
        return all(f > F_CLEAR[k] for k, f in zip(LAGS, fs) if labels["lag"] <= k <= 5)

    direction = labels["direction"]
    if direction == "x->y":
        return strong(x_to_y) and quiet(y_to_x)
    if direction == "y->x":
        return strong(y_to_x) and quiet(x_to_y)
    return quiet(x_to_y) and quiet(y_to_x)


def question(num_samples):
    items = []
    directions = ["x->y", "y->x", "none"]
    for _ in range(num_samples):
        n = int(rng.integers(150, 301))
        direction = directions[int(rng.integers(3))]
        for _ in range(200):
            made = synth.granger_pair(rng, n, direction=direction)
            if clear(np.asarray(made.values), made.labels):
                break
        labels = made.labels
        names = ["A", "B"] if rng.random() < 0.5 else ["B", "A"]  # names[0] shows x, names[1] shows y
        shown = {"x": names[0], "y": names[1]}
        texts = {
            "x->y": f"{shown['x']} Granger-causes {shown['y']}: past {shown['x']} helps predict {shown['y']}, not the reverse",
            "y->x": f"{shown['y']} Granger-causes {shown['x']}: past {shown['y']} helps predict {shown['x']}, not the reverse",
            "none": "Neither: the two series are independent, neither's past helps predict the other",
        }
        channels = [series(made.values[:, 0], name=f"series {names[0]}"),
                    series(made.values[:, 1], name=f"series {names[1]}")]
        if names[0] == "B":
            channels = channels[::-1]
        detail = ("two independent AR(1) series" if direction == "none" else
                  f"{shown[labels['effect']]}[t] depends on {shown[labels['cause']]}[t-{labels['lag']}] "
                  f"(coefficient {labels['coefficient']:.2f})")
        items.append(mc_item(
            f"Series A and series B are two synthetic daily series ({n} days). Which statement about Granger "
            "causality between them is correct?",
            texts[direction], [texts[d] for d in directions if d != direction],
            series=channels,
            rationale=f"Generated with synth.granger_pair(direction='{direction}'): {detail}.",
            metadata={"n_options": 3, "generator": "granger_pair", "direction": direction, "x_is": f"series {shown['x']}",
                      "y_is": f"series {shown['y']}", "length": n, "labels": labels},
        ))
    return items
