"""TSAQA puzzle (PZ): put the shuffled windows of a trend-plus-season series back in time order.

The series is a z-scored linear trend (total change 3 to 6 seasonal amplitudes) plus a seasonal cycle
(period 20 to 60 samples) with low noise, cut into 1 + k windows of equal length (k = 3 or 4). The first
window is given; the other k are shuffled. The draw is kept only if, for every wrong adjacency (window i
followed by a window other than i + 1), the noise-free jump at the join is at least 0.7 seasonal
amplitudes, so only the true order joins every window to the next without a jump.
"""

GAP = 0.7


def question(num_samples):
    items = []
    while len(items) < num_samples:
        k = int(rng.integers(3, 5))
        L = int(rng.integers(20, min(40, 250 // (k + 1)) + 1))
        n = (k + 1) * L + 1
        period = float(rng.integers(20, 61))
        change = float(rng.choice([-1, 1]) * rng.uniform(3.0, 6.0))
        lin = synth.linear(rng, n, slope=change / (n - 1), intercept=0.0)
        sin = synth.sine(rng, n, period=period, amplitude=1.0)
        made = synth.add(lin, sin, synth.white_noise(rng, n, sigma=float(rng.uniform(0.03, 0.06))))
        clean = lin.values + sin.values
        jumps = [abs(clean[j * L] - clean[(i + 1) * L]) for i in range(k + 1) for j in range(1, k + 1)
                 if j != i and j != i + 1]
        if min(jumps) < GAP:
            continue
        x = synth.zscore(made.values)[: (k + 1) * L]
        segments = [x[j * L:(j + 1) * L] for j in range(1, k + 1)]
        items.append(pz_item(
            f"A z-score normalised series (a trend plus a smooth seasonal cycle, little noise) was cut into "
            f"{k + 1} consecutive windows of {L} samples. 'given' is the first window; S1 to S{k} are the other "
            f"{k} windows in shuffled order. Which ordering of S1 to S{k} restores the original time order after "
            "'given'?",
            x[:L], segments, n_options=4 if k == 3 else 5,
            rationale=(f"Trend change {change:+.2f} over {n} samples plus a sine of period {period:g} (amplitude "
                       f"1) and noise; windows 2 to {k + 1} are shuffled. Every wrong adjacency has a noise-free "
                       f"jump of at least {GAP} amplitudes (smallest {min(jumps):.2f}), the true joins none."),
            metadata={"k": k, "window": L, "period": period, "change": change, "min_wrong_jump": float(min(jumps)),
                      "labels": made.labels},
        ))
    return items
