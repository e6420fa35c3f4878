"""Cross-correlation lag (seed 000 cross-correlation with lag): by how many days does y follow x?
Bound to synth.lagged_pair's lag (1-10 days); distractors are other lags 0-12."""


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def days(k):
    return "0 days (same day)" if k == 0 else f"{k} day{'s' if k > 1 else ''}"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(120, 201))
        lag = int(rng.integers(1, 11))
        sign = "positive" if rng.random() < 0.5 else "negative"
        made = synth.lagged_pair(rng, n, kind=sign, lag=lag)
        labels = dict(made.labels)
        wrong = []
        for k in rng.permutation(13):
            if int(k) != lag and len(wrong) < 3:
                wrong.append(int(k))
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
