"""TSAQA temporal relation (MC): where in the full series was a separately z-scored window cut from.

The full series is a smooth integrated AR(1) path (AR coefficient 0.85 to 0.95, so it curves with
momentum) plus a little noise, z-scored. The window is z-scored on its own, so only its shape tells where
it came from. The options are four non-overlapping sample ranges of the window's length; every distractor
range has correlation below 0.7 with the window.
"""


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = int(rng.integers(150, 301))
        L = int(rng.integers(20, 41))
        steps = synth.ar(rng, n, coefficients=[float(rng.uniform(0.85, 0.95))], sigma=1.0)
        path = np.cumsum(steps.values)
        noise = synth.white_noise(rng, n, sigma=0.1 * float(np.std(np.diff(path))))
        x = synth.zscore(path + noise.values)
        s = int(rng.integers(0, n - L + 1))
        window = synth.zscore(x[s:s + L])
        others = []
        for d in rng.permutation(n - L + 1)[:400]:
            d = int(d)
            if all(abs(d - q) >= L for q in [s] + others) and \
                    float(np.corrcoef(window, x[d:d + L])[0, 1]) < 0.7:
                others.append(d)
                if len(others) == 3:
                    break
        if len(others) < 3:
            continue
        label = "samples {}-{}"
        items.append(mc_item(
            f"'series' has {n} samples (index 0 to {n - 1}, z-score normalised). 'window' is a stretch of {L} "
            "consecutive samples cut from it and then z-score normalised on its own, so its level and scale "
            "differ from the original stretch but its shape is the same. Which index range of 'series' was "
            "'window' cut from?",
            label.format(s, s + L - 1), [label.format(d, d + L - 1) for d in others],
            series=[series(x, name="series"), series(window, name="window")],
            rationale=(f"'window' = zscore(series[{s}:{s + L}]); the other ranges start at "
                       + ", ".join(str(d) for d in others)
                       + " and their stretches correlate below 0.7 with the window."),
            metadata={"n": n, "window": L, "start": s, "distractor_starts": others, "ar_labels": steps.labels},
        ))
    return items
