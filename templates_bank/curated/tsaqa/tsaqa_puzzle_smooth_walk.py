"""TSAQA puzzle (PZ): put the shuffled windows of a smooth wandering path back in time order.

The path is the running sum of an AR(1) process (coefficient 0.88 to 0.96: the path keeps its momentum
and curves smoothly) plus a little noise, z-scored, and cut into 1 + k windows of equal length (k = 3 or 4).
The first window is given; the other k are shuffled. The draw is kept only if, for every wrong adjacency,
the noise-free jump at the join is at least 6 innovation standard deviations, so only the true order joins
without a jump.
"""

GAP = 6.0


def question(num_samples):
    items = []
    while len(items) < num_samples:
        k = int(rng.integers(3, 5))
        L = int(rng.integers(20, min(40, 250 // (k + 1)) + 1))
        n = max((k + 1) * L + 1, 60)
        steps = synth.ar(rng, n, coefficients=[float(rng.uniform(0.88, 0.96))], sigma=1.0)
        path = np.cumsum(steps.values)
        noise = synth.white_noise(rng, n, sigma=0.2)
        jumps = [abs(path[j * L] - path[(i + 1) * L]) for i in range(k + 1) for j in range(1, k + 1)
                 if j != i and j != i + 1]
        if min(jumps) < GAP:
            continue
        x = synth.zscore((path + noise.values)[: (k + 1) * L])
        segments = [x[j * L:(j + 1) * L] for j in range(1, k + 1)]
        items.append(pz_item(
            f"A smooth, wandering z-score normalised series (little noise) was cut into {k + 1} consecutive "
            f"windows of {L} samples. 'given' is the first window; S1 to S{k} are the other {k} windows in "
            f"shuffled order. Which ordering of S1 to S{k} restores the original time order after 'given'?",
            x[:L], segments, n_options=4 if k == 3 else 5,
            rationale=(f"Running sum of AR(1) steps (coefficient {steps.labels['coefficients'][0]:.2f}, innovation "
                       f"sd 1) plus noise sd 0.2, {(k + 1) * L} samples; windows 2 to {k + 1} are shuffled. Every "
                       f"wrong adjacency jumps by at least {GAP:g} (smallest {min(jumps):.1f}) before z-scoring."),
            metadata={"k": k, "window": L, "min_wrong_jump": float(min(jumps)), "ar_labels": steps.labels},
        ))
    return items
