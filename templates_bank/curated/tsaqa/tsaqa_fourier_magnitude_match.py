"""TSAQA transformation (MC): which candidate is the Fourier amplitude spectrum of the reference series.

The reference is a z-scored sum of two sines with a whole number of cycles plus white noise, so its
spectrum has two clear peaks; the distractors are the same transform of other series whose peaks
sit at least 3 frequency bins away from both of the reference's peaks.
"""


def two_tone(n, cycles, amps, noise):
    parts = [synth.sine(rng, n, period=n / c, amplitude=a) for c, a in zip(cycles, amps)]
    parts.append(synth.white_noise(rng, n, sigma=noise))
    made = synth.add(parts[0], parts[1], parts[2])
    return made, synth.zscore(made.values)


def draw_cycles(n, avoid):
    for _ in range(200):
        low = int(rng.integers(2, max(4, n // 10) + 1))
        high = int(rng.integers(low + 5, n // 4 + 1))
        pair = [low, high]
        if all(min(abs(c - a) for a in blocked) >= 3 for blocked in avoid for c in pair):
            return pair
    return None


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = 2 * int(rng.integers(40, 101))
        cycles = draw_cycles(n, [])
        others = []
        for _ in range(3):
            pair = draw_cycles(n, [cycles] + others)
            if pair is None:
                break
            others.append(pair)
        if len(others) < 3:
            continue
        amps = [float(rng.uniform(2.0, 4.0)), float(rng.uniform(1.2, 2.5))]
        noise = float(rng.uniform(0.3, 0.6))
        ref, x = two_tone(n, cycles, amps, noise)
        spectra = [synth.fourier_magnitude(x)]
        for pair in others:
            made, y = two_tone(n, pair, [float(rng.uniform(2.0, 4.0)), float(rng.uniform(1.2, 2.5))], noise)
            spectra.append(synth.fourier_magnitude(y))
        order = rng.permutation(4)
        names = ["candidate " + str(j + 1) for j in range(4)]
        channels = [series(x, name="reference")]
        channels += [series(spectra[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'reference' is a z-score normalised series of {n} samples. Each candidate is an amplitude "
            "spectrum: the magnitude of the discrete Fourier transform with the DC (mean) term dropped, so "
            f"element i (0-based) is the frequency (i + 1)/{n} cycles per sample, i.e. a period of "
            f"{n}/(i + 1) samples. Which candidate is the Fourier magnitude spectrum of 'reference'?",
            keyed, wrong, series=channels,
            rationale=(f"'reference' is zscore(sine with {cycles[0]} cycles + sine with {cycles[1]} cycles over {n} "
                       f"samples + white noise), so its spectrum peaks at elements {cycles[0] - 1} and "
                       f"{cycles[1] - 1}; {keyed} is fourier_magnitude(reference). The other candidates are "
                       "spectra of series with "
                       + ", ".join(f"{p[0]} and {p[1]} cycles" for p in others)
                       + " (peaks at least 3 bins from the reference's)."),
            metadata={"n": n, "reference_cycles": cycles, "distractor_cycles": others, "keyed_channel": keyed,
                      "reference_labels": ref.labels},
        ))
    return items
