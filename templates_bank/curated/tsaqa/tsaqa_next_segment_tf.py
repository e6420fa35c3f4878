"""TSAQA temporal relation (TF): does window B come immediately after window A in the same series?

The source is a z-scored linear trend plus a seasonal cycle (period 24 to 60 samples, amplitude 1
before normalising) with low noise. True items: B is the window right after A. False items: B is a
window from elsewhere in the same series (two thirds) or from a second series of the same kind (one
third), chosen so that its first noise-free value is at least 0.8 seasonal amplitudes away from A's
noise-free continuation: a false B visibly jumps where it should join.
"""

GAP = 0.8


def source(n):
    lin = synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(2.0, 5.0)) / n, intercept=0.0)
    sin = synth.sine(rng, n, period=float(rng.integers(24, 61)), amplitude=1.0)
    noise = synth.white_noise(rng, n, sigma=float(rng.uniform(0.03, 0.06)))
    made = synth.add(lin, sin, noise)
    mu, sd = float(np.mean(made.values)), float(np.std(made.values))
    return made, (made.values - mu) / sd, (lin.values + sin.values - mu) / sd, sd


def question(num_samples):
    items = []
    for _ in range(num_samples):
        item = None
        truth = bool(rng.random() < 0.5)
        while item is None:
            item = build(truth)
        items.append(item)
    return items


def build(truth):
    """One item with the given truth value, or None when this draw has no suitable false window."""
    L = int(rng.integers(20, 41))
    n = int(rng.integers(max(6 * L, 150), 301))
    made, x, clean, sd = source(n)
    s0 = int(rng.integers(0, n - 2 * L + 1))
    e = s0 + L
    other_labels = None
    if truth:
        b, case, b0 = x[e:e + L], "successor", e
    else:
        foreign = rng.random() < 1 / 3
        if foreign:
            other, y, pool_clean, other_sd = source(n)
            other_labels = other.labels
        else:
            y, pool_clean = x, clean
        ok = [int(d) for d in rng.permutation(n - L + 1)[:300]
              if abs(int(d) - e) >= L and (foreign or abs(int(d) - s0) >= L // 2)
              and abs(pool_clean[int(d)] - clean[e]) >= GAP / sd]
        if not ok:
            return None
        b0 = ok[0]
        b = y[b0:b0 + L]
        case = "other_series" if foreign else "same_series_elsewhere"
    return tf_item(
        f"A and B are two windows of {L} samples each, cut from z-score normalised series that combine a "
        "trend with a smooth seasonal cycle and little noise. True or false: B is the window that comes "
        "immediately after A in the same series (B[0] is the sample right after A's last one).",
        truth,
        series=[series(x[s0:e], name="A"), series(b, name="B")],
        rationale=(f"A is samples {s0}-{e - 1} of a {n}-sample series; B is samples {b0}-{b0 + L - 1} of "
                   + ("the same series (the true successor)." if truth else
                      ("another series" if case == "other_series" else "the same series")
                      + f", whose noise-free start is at least {GAP} seasonal amplitudes from A's continuation.")),
        metadata={"n": n, "window": L, "a_start": s0, "b_start": b0, "case": case, "labels": made.labels,
                  "other_labels": other_labels},
    )
