"""TSAQA temporal relation (MC): which candidate window comes right after the shown window.

The source is a z-scored linear trend plus a seasonal cycle (period 24 to 60 samples, amplitude 1
before normalising) with low noise, so consecutive windows join smoothly. The keyed candidate is the
window that immediately follows; two distractors are windows from elsewhere in the same series and one
is from a second series of the same kind. Every distractor starts at least 0.7 seasonal amplitudes
(noise-free) away from where the shown window's noise-free continuation lies, so only the true successor
joins on without a jump.
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
        s0 = int(rng.integers(0, n - 2 * L + 1))
        e = s0 + L
        target = clean[e]
        starts = []
        for _ in range(300):
            d = int(rng.integers(0, n - L + 1))
            if abs(d - e) >= L and abs(d - s0) >= L // 2 and all(abs(d - q) >= L // 2 for q in starts) \
                    and abs(clean[d] - target) >= GAP / sd:
                starts.append(d)
                if len(starts) == 2:
                    break
        foreign = [d for d in rng.permutation(n - L + 1)[:300] if abs(other_clean[int(d)] - target) >= GAP / sd]
        if len(starts) < 2 or not foreign:
            continue
        f0 = int(foreign[0])
        cands = [x[e:e + L], x[starts[0]:starts[0] + L], x[starts[1]:starts[1] + L], y[f0:f0 + L]]
        where = [f"samples {e}-{e + L - 1} (the true successor)", f"samples {starts[0]}-{starts[0] + L - 1}",
                 f"samples {starts[1]}-{starts[1] + L - 1}", f"samples {f0}-{f0 + L - 1} of another series"]
        order = rng.permutation(4)
        names = ["candidate " + str(j + 1) for j in range(4)]
        channels = [series(x[s0:e], name="shown")] + [series(cands[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'shown' is a window of {L} samples cut from a longer z-score normalised series (a trend plus a "
            f"smooth seasonal cycle, little noise). Each candidate is also {L} samples long. Exactly one "
            "candidate is the window that comes immediately after 'shown' in the same series; the others were "
            "cut from elsewhere in that series or from a different series. Which candidate comes right after "
            "'shown'?",
            keyed, wrong, series=channels,
            rationale=(f"'shown' is samples {s0}-{e - 1} of a {n}-sample series; the channels hold "
                       + "; ".join(f"{names[j]}: {where[int(order[j])]}" for j in range(4))
                       + f". Every distractor starts at least {GAP} seasonal amplitudes (noise-free) away from "
                       "the series' value right after 'shown'."),
            metadata={"n": n, "window": L, "shown_start": s0, "keyed_channel": keyed, "distractor_starts": starts,
                      "foreign_start": f0, "labels": made.labels, "foreign_labels": other.labels},
        ))
    return items
