"""TSAQA temporal relation (MC): which candidate window came right before the shown window.

The source is a z-scored linear trend plus a seasonal cycle (period 24 to 60 samples, amplitude 1
before normalising) with low noise. The keyed candidate is the window that immediately precedes the
shown one; two distractors are windows from elsewhere in the same series and one is from a second series
of the same kind. Every distractor ends at least 0.7 seasonal amplitudes (noise-free) away from the
series' noise-free value just before the shown window, so only the true predecessor leads into it
without a jump.
"""

GAP = 0.7


def source(n):
    lin = synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(2.0, 5.0)) / n, intercept=0.0)
    sin = synth.sine(rng, n, period=float(rng.integers(24, 61)), amplitude=1.0)
    noise = synth.white_noise(rng, n, sigma=float(rng.uniform(0.03, 0.06)))
    made = synth.add(lin, sin, noise)
    mu, sd = float(np.mean(made.values)), float(np.std(made.values))
    return made, (made.values - mu) / sd, (lin.values + sin.values - mu) / sd, sd


def question(num_samples):
    items = []
    while len(items) < num_samples:
        L = int(rng.integers(20, 41))
        n = int(rng.integers(max(6 * L, 150), 301))
        made, x, clean, sd = source(n)
        other, y, other_clean, other_sd = source(n)
        s0 = int(rng.integers(L, n - L + 1))
        p0 = s0 - L
        target = clean[s0 - 1]
        starts = []
        for _ in range(300):
            d = int(rng.integers(0, n - L + 1))
            if abs(d - p0) >= L and abs(d - s0) >= L // 2 and all(abs(d - q) >= L // 2 for q in starts) \
                    and abs(clean[d + L - 1] - target) >= GAP / sd:
                starts.append(d)
                if len(starts) == 2:
                    break
        foreign = [d for d in rng.permutation(n - L + 1)[:300]
                   if abs(other_clean[int(d) + L - 1] - target) >= GAP / sd]
        if len(starts) < 2 or not foreign:
            continue
        f0 = int(foreign[0])
        cands = [x[p0:s0], x[starts[0]:starts[0] + L], x[starts[1]:starts[1] + L], y[f0:f0 + L]]
        where = [f"samples {p0}-{s0 - 1} (the true predecessor)", f"samples {starts[0]}-{starts[0] + L - 1}",
                 f"samples {starts[1]}-{starts[1] + L - 1}", f"samples {f0}-{f0 + L - 1} of another series"]
        order = rng.permutation(4)
        names = ["candidate " + str(j + 1) for j in range(4)]
        channels = [series(x[s0:s0 + L], name="shown")]
        channels += [series(cands[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'shown' is a window of {L} samples cut from a longer z-score normalised series (a trend plus a "
            f"smooth seasonal cycle, little noise). Each candidate is also {L} samples long. Exactly one "
            "candidate is the window that comes immediately before 'shown' in the same series (it ends right "
            "where 'shown' begins); the others were cut from elsewhere in that series or from a different "
            "series. Which candidate comes right before 'shown'?",
            keyed, wrong, series=channels,
            rationale=(f"'shown' is samples {s0}-{s0 + L - 1} of a {n}-sample series; the channels hold "
                       + "; ".join(f"{names[j]}: {where[int(order[j])]}" for j in range(4))
                       + f". Every distractor ends at least {GAP} seasonal amplitudes (noise-free) away from "
                       "the series' value right before 'shown'."),
            metadata={"n": n, "window": L, "shown_start": s0, "keyed_channel": keyed, "distractor_starts": starts,
                      "foreign_start": f0, "labels": made.labels, "foreign_labels": other.labels},
        ))
    return items
