"""TSAQA temporal relation (MC): which of four windows of a trending series was recorded first (or last).

The source is a z-scored linear trend (total change 4 to 8 seasonal amplitudes, direction stated in the
question) plus a seasonal cycle and noise. Four non-overlapping windows are cut; their noise-free means
must follow the trend with at least 0.6 seasonal amplitudes between time-neighbours, so the level
ordering is the time ordering. The windows are shown in a random order.
"""

GAP = 0.6


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = int(rng.integers(160, 301))
        period = float(rng.integers(12, 41))
        L = int(rng.integers(max(16, int(period)), 41))
        direction = ["up", "down"][int(rng.integers(2))]
        change = (1 if direction == "up" else -1) * float(rng.uniform(4.0, 8.0))
        lin = synth.linear(rng, n, slope=change / (n - 1), intercept=0.0)
        sin = synth.sine(rng, n, period=period, amplitude=1.0)
        made = synth.add(lin, sin, synth.white_noise(rng, n, sigma=float(rng.uniform(0.2, 0.4))))
        clean = lin.values + sin.values
        starts = sorted(int(v) for v in rng.choice(np.arange(0, n - L + 1), size=4, replace=False))
        if min(b - a for a, b in zip(starts, starts[1:])) < L:
            continue
        means = [float(np.mean(clean[s:s + L])) * (1 if direction == "up" else -1) for s in starts]
        if min(b - a for a, b in zip(means, means[1:])) < GAP:
            continue
        x = synth.zscore(made.values)
        ask = ["first", "last"][int(rng.integers(2))]
        order = rng.permutation(4)  # window j shows the order[j]-th window in time
        names = ["window " + str(j + 1) for j in range(4)]
        channels = [series(x[starts[int(order[j])]:starts[int(order[j])] + L], name=names[j]) for j in range(4)]
        target = 0 if ask == "first" else 3
        keyed = names[int(np.flatnonzero(order == target)[0])]
        wrong = [nm for nm in names if nm != keyed]
        verb = "rises" if direction == "up" else "falls"
        items.append(mc_item(
            f"Four non-overlapping windows of {L} samples were cut from one z-score normalised series of {n} "
            f"samples and are shown in random order. The series {verb} steadily over time (a linear trend) with "
            f"a seasonal cycle and noise on top. Which window was recorded {ask}?",
            keyed, wrong, series=channels,
            rationale=(f"Trend change {change:+.2f} over {n} samples (seasonal amplitude 1, period {period:g}); "
                       "the windows start at samples "
                       + ", ".join(f"{names[j]}: {starts[int(order[j])]}" for j in range(4))
                       + f". Their noise-free means follow the trend with gaps of at least {GAP} amplitudes, so "
                       f"the {ask} window is {keyed}."),
            metadata={"n": n, "window": L, "direction": direction, "asked": ask, "keyed_channel": keyed,
                      "window_starts": {names[j]: starts[int(order[j])] for j in range(4)}, "labels": made.labels},
        ))
    return items
