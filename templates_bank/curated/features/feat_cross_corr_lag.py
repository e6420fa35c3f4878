"""Cross-correlation lag (Fons et al. cross-correlation with lag): by how many days does y follow x?
Bound to synth.lagged_pair's lag (1-10 days); the options are four different delays of 1-10
days, the key drawn uniformly among them (no zero delay, which the question rules out)."""


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def days(k):
    return f"{k} day{'s' if k > 1 else ''}"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(120, 201))
        # four different delays of 1 to 10 days, the key a uniformly drawn one of them: every option
        # has the key's distribution, so no rank, size or frequency of an option tells
        lags = sorted(int(k) for k in rng.choice(np.arange(1, 11), size=4, replace=False))
        lag = lags[int(rng.integers(4))]
        sign = "positive" if rng.random() < 0.5 else "negative"
        made = synth.lagged_pair(rng, n, kind=sign, lag=lag)
        labels = dict(made.labels)
        wrong = [k for k in lags if k != lag]
        dates = daily_dates(n)
        vals = np.round(made.values, 2)
        relation = "the same way as" if sign == "positive" else "opposite to"
        items.append(mc_item(
            f"x and y are daily series from {dates[0]} to {dates[-1]}. y moves {relation} x, but with a delay. "
            "By how many days does y lag behind x?",
            days(lag), [days(k) for k in wrong],
            series=[series(vals[:, 0], name="x", timestamps=dates),
                    series(vals[:, 1], name="y", timestamps=dates)],
            rationale=(f"Built with synth.lagged_pair(kind='{sign}', lag={lag}): y[t] = rho * x[t - {lag}] + noise "
                       f"with rho = {labels['rho']:+.2f}, so the cross-correlation corr(x[t - k], y[t]) peaks at "
                       f"k = {lag}."),
            metadata={"generator": "lagged_pair", "length": n, "labels": labels, "lag": lag},
        ))
    return items
