"""TSAQA transformation (MC): which candidate is the z-score normalisation of the reference series.

The reference is a raw curved trend plus a seasonal cycle (level 20 to 100, standard deviation at least
3). Distractors are other transforms of the same series: its z-score flipped upside down, its z-score
run backwards in time, its min-max scaling to [0, 1], and (sometimes) its mean-centred values without
the division by the standard deviation.
"""


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = int(rng.integers(60, 201))
        trend = synth.trend(rng, n, kind=["up", "down"][int(rng.integers(2))],
                            shape=["quadratic", "exponential"][int(rng.integers(2))])
        season = synth.sine(rng, n, period=float(rng.integers(8, n // 4 + 1)),
                            amplitude=float(rng.uniform(0.15, 0.3)) * abs(trend.labels["change"]))
        made = synth.add(trend, season)
        x = made.values
        sd = float(np.std(x))
        if sd < 3.0:
            continue
        z = synth.zscore(x)
        cands = {"zscore": z, "negated": -z, "time_reversed": synth.zscore(x[::-1]),
                 "min_max": (x - np.min(x)) / (np.max(x) - np.min(x))}
        if rng.random() < 0.5:
            cands["centred_only"] = x - np.mean(x)
        kinds = list(cands)
        order = rng.permutation(len(kinds))
        names = ["candidate " + str(j + 1) for j in range(len(kinds))]
        channel_kind = {names[j]: kinds[int(order[j])] for j in range(len(kinds))}
        channels = [series(x, name="reference")] + [series(cands[channel_kind[nm]], name=nm) for nm in names]
        keyed = [nm for nm in names if channel_kind[nm] == "zscore"][0]
        wrong = [nm for nm in names if nm != keyed]
        items.append(mc_item(
            f"'reference' is a raw series of {n} samples. Which candidate is its z-score normalisation, "
            "(reference - mean) / standard deviation (population standard deviation)?",
            keyed, wrong, series=channels,
            rationale=(f"'reference' = trend (kind {trend.labels['kind']}, shape {trend.labels['shape']}) + sine; "
                       f"mean {float(np.mean(x)):.2f}, sd {sd:.2f}. '{keyed}' is zscore(reference); the others are "
                       + ", ".join(f"{nm}: {channel_kind[nm]}" for nm in wrong) + "."),
            metadata={"n": n, "keyed_channel": keyed, "channel_transforms": channel_kind, "mean": float(np.mean(x)),
                      "std": sd, "reference_labels": made.labels},
        ))
    return items
