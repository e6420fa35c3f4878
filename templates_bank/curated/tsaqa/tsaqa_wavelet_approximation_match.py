"""TSAQA transformation (MC): which candidate is the wavelet approximation (smooth part) of the reference.

The reference is a z-scored slow trend plus a slow seasonal cycle with visible noise; its db4 level-3
wavelet approximation keeps the slow shape and drops the noise. Distractors: the approximation run
backwards in time (the same transform's output, wrong time direction) and the approximations of two
other series with different periods and trends; each differs from the keyed curve by at least half its
own root-mean-square size.
"""


def noisy(n, period):
    made = synth.add(synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(1.5, 3.0)) / n,
                                  intercept=0.0),
                     synth.sine(rng, n, period=period, amplitude=1.0),
                     synth.white_noise(rng, n, sigma=float(rng.uniform(0.25, 0.4))))
    return made, synth.zscore(made.values)


def rms(v):
    return float(np.sqrt(np.mean(np.asarray(v) ** 2)))


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = int(rng.integers(96, 257))
        period = float(rng.integers(28, max(29, n // 3) + 1))
        ref, x = noisy(n, period)
        smooth = synth.wavelet_approximation(x)
        periods = [period]
        cands = [smooth, smooth[::-1]]
        for _ in range(2):
            p = float(rng.integers(28, max(29, n // 3) + 1))
            periods.append(p)
            cands.append(synth.wavelet_approximation(noisy(n, p)[1]))
        if min(rms(smooth - c) for c in cands[1:]) < 0.5 * rms(smooth):
            continue
        order = rng.permutation(4)
        names = ["candidate " + str(j + 1) for j in range(4)]
        channels = [series(x, name="reference")]
        channels += [series(cands[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        reversed_name = names[int(np.flatnonzero(order == 1)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'reference' is a noisy, z-score normalised series of {n} samples. Each candidate (also {n} "
            "samples) is a smoothed curve. Which candidate is the wavelet approximation of 'reference' "
            "(Daubechies-4 wavelet, level 3: all detail coefficients set to zero and the series reconstructed, "
            "which keeps the slow shape and removes the fast noise)?",
            keyed, wrong, series=channels,
            rationale=(f"'reference' is zscore(linear trend + sine with period {period:g} + noise); '{keyed}' is "
                       f"wavelet_approximation(reference) (db4, level 3). '{reversed_name}' is that curve reversed "
                       f"in time; the other two are approximations of series with periods {periods[1]:g} and "
                       f"{periods[2]:g}. Every distractor is at least 0.5 x RMS(keyed curve) away in RMS."),
            metadata={"n": n, "period": period, "wavelet": "db4", "level": 3, "distractor_periods": periods[1:],
                      "keyed_channel": keyed, "reversed_channel": reversed_name, "reference_labels": ref.labels},
        ))
    return items
