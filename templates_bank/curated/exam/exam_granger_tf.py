"""True or false: past values of one series help predict the other (Granger causality; TimeSeriesExam
causality). The pair comes from `synth.granger_pair` with direction x->y, y->x or none; the
statement is true exactly when the generator's cause is the series the statement names.

A draw is kept only when its direction is clear to any usual Granger test: at every lag order 1-8
the F-test of a denied direction stays below its 25% critical value (p > 0.25), and at every
order from the true lag to 5 the claimed one is far beyond its 0.0001% one (with the generator's
own check only, a VAR test at 5% with the AIC's lag order disagreed with ~3% of the keys)."""

DIRECTIONS = ["x->y", "y->x", "none"]
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
    for _ in range(num_samples):
        n = int(rng.integers(150, 301))
        # True and False equally often: a true statement names the real cause; a false one
        # names the effect of a causal pair or either series of an independent pair
        is_true = bool(rng.random() < 0.5)
        direction = DIRECTIONS[int(rng.integers(2 if is_true else 3))]
        for _ in range(200):
            made = synth.granger_pair(rng, n, direction=direction)
            if clear(np.asarray(made.values), made.labels):
                break
        labels = made.labels
        if direction == "none":
            cause = "x" if rng.random() < 0.5 else "y"
        else:
            cause = labels["cause"] if is_true else labels["effect"]
        effect = "y" if cause == "x" else "x"
        if direction == "none":
            truth = "the two series are independent AR(1) processes"
        else:
            truth = (f"{labels['effect']}[t] depends on {labels['cause']}[t-{labels['lag']}] with coefficient "
                     f"{labels['coefficient']:.2f}, and not the other way round")
        items.append(tf_item(
            f"Series x and y are two synthetic daily series ({n} days). True or false: {cause} Granger-causes "
            f"{effect}, i.e. past values of {cause} help predict {effect} beyond what {effect}'s own past already tells.",
            is_true,
            series=[series(made.values[:, 0], name="x"), series(made.values[:, 1], name="y")],
            rationale=f"Generated with synth.granger_pair(direction='{direction}'): {truth}.",
            metadata={"generator": "granger_pair", "direction": direction, "statement": f"{cause}->{effect}",
                      "length": n, "labels": labels},
        ))
    return items
