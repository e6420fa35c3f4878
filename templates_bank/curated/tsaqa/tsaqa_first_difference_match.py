"""TSAQA transformation (MC): which candidate is the first difference of the reference series.

The reference is a z-scored trend plus a seasonal cycle with little noise, so its first difference is a
clear oscillation. Distractors: the sign-flipped difference of the reference (x[t-1] - x[t]) and the
first differences of two other series of the same kind with clearly different periods; every distractor
has correlation below 0.6 with the keyed difference.
"""


def smooth(n, period):
    made = synth.add(synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(1.0, 3.0)) / n,
                                  intercept=0.0),
                     synth.sine(rng, n, period=period, amplitude=1.0),
                     synth.white_noise(rng, n, sigma=float(rng.uniform(0.02, 0.04))))
    return made, synth.zscore(made.values)


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = int(rng.integers(80, 201))
        period = float(rng.integers(10, 41))
        ref, x = smooth(n, period)
        keyed_diff = synth.first_difference(x)
        periods = [period]
        cands = [keyed_diff, -keyed_diff]
        for _ in range(2):
            for _ in range(100):
                p = float(rng.integers(8, 49))
                if all(max(p, q) / min(p, q) >= 1.4 for q in periods):
                    periods.append(p)
                    cands.append(synth.first_difference(smooth(n, p)[1]))
                    break
        if len(periods) < 3 or max(float(np.corrcoef(keyed_diff, c)[0, 1]) for c in cands[1:]) >= 0.6:
            continue
        order = rng.permutation(4)
        names = ["candidate " + str(j + 1) for j in range(4)]
        channels = [series(x, name="reference")]
        channels += [series(cands[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        flipped = names[int(np.flatnonzero(order == 1)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'reference' is a z-score normalised series of {n} samples; each candidate has {n - 1} samples. "
            "Which candidate is the first difference of 'reference', i.e. d[t] = reference[t + 1] - reference[t]?",
            keyed, wrong, series=channels,
            rationale=(f"'reference' is zscore(linear trend + sine with period {period:g} + small noise); '{keyed}' is "
                       f"first_difference(reference). '{flipped}' is the same difference with its sign flipped "
                       "(reference[t] - reference[t + 1]); the other two are first differences of series with "
                       f"periods {periods[1]:g} and {periods[2]:g}."),
            metadata={"n": n, "period": period, "distractor_periods": periods[1:], "keyed_channel": keyed,
                      "sign_flipped_channel": flipped, "reference_labels": ref.labels},
        ))
    return items
