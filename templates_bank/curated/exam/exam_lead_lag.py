"""Which series leads and by how many days (lead-lag; TimeSeriesExam causality). The pair comes from
`synth.lagged_pair`, where y repeats x `lag` days later; the series are shown under neutral names
in random roles, and the options name four different lags (two per direction)."""


def phrase(leader, follower, lag):
    return f"{leader[0].upper()}{leader[1:]} leads {follower} by {lag} day" + ("" if lag == 1 else "s")


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 251))
        # four different lags of 2-10 days, the key a uniformly drawn one of them
        lags = sorted(int(v) for v in rng.choice(np.arange(2, 11), size=4, replace=False))
        made = synth.lagged_pair(rng, n, lag=lags[int(rng.integers(4))])
        labels = made.labels
        lag = labels["lag"]
        names = ["A", "B"] if rng.random() < 0.5 else ["B", "A"]  # names[0] shows x (leader), names[1] shows y
        leader, follower = f"series {names[0]}", f"series {names[1]}"
        # the other three lags; two options name each direction, so neither the lag's rank nor
        # the direction gives the key away
        other_lags = [v for v in lags if v != lag]
        flip = int(rng.integers(3))
        wrong = [phrase(leader, follower, o) if i == flip else phrase(follower, leader, o)
                 for i, o in enumerate(other_lags)]
        channels = [series(made.values[:, 0], name=leader), series(made.values[:, 1], name=follower)]
        if names[0] == "B":
            channels = channels[::-1]
        relation = "the same" if labels["rho"] > 0 else "the opposite"
        items.append(mc_item(
            f"Series A and series B are two synthetic daily series ({n} days). One of them echoes the other's "
            "movements (possibly inverted) a fixed number of days later. Which statement is correct?",
            phrase(leader, follower, lag), wrong,
            series=channels,
            rationale=(f"Generated with synth.lagged_pair: {follower}[t] = {labels['rho']:.2f} x {leader}[t-{lag}] + noise "
                       f"(after standardizing), so {follower} moves in {relation} direction {lag} days after {leader}."),
            metadata={"generator": "lagged_pair", "leader": leader, "follower": follower, "lag": lag,
                      "length": n, "labels": labels},
        ))
    return items
