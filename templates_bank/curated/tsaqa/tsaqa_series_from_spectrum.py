"""TSAQA transformation (MC), inverse direction: given an amplitude spectrum, which candidate series has it.

Every candidate is a z-scored sum of two sines (a strong and a weak one, a whole number of cycles each)
plus a little noise. The keyed candidate made the spectrum; one distractor has the same two frequencies
with the strong and weak amplitudes swapped (the peak heights are reversed), the others have peaks at
least 3 frequency bins away from the spectrum's.
"""


def two_tone(n, cycles, amps, noise):
    made = synth.add(synth.sine(rng, n, period=n / cycles[0], amplitude=amps[0]),
                     synth.sine(rng, n, period=n / cycles[1], amplitude=amps[1]),
                     synth.white_noise(rng, n, sigma=noise))
    return made, synth.zscore(made.values)


def draw_cycles(n, avoid):
    for _ in range(200):
        pair = [int(v) for v in rng.choice(np.arange(2, n // 5 + 1), size=2, replace=False)]
        if abs(pair[0] - pair[1]) >= 4 and all(min(abs(c - a) for a in blocked) >= 3 for blocked in avoid
                                               for c in pair):
            return pair
    return None


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = 2 * int(rng.integers(40, 91))
        cycles = draw_cycles(n, [])
        others = []
        for _ in range(2):
            pair = draw_cycles(n, [cycles] + others)
            if pair is not None:
                others.append(pair)
        if len(others) < 2:
            continue
        strong, weak = float(rng.uniform(3.0, 4.0)), float(rng.uniform(0.8, 1.4))
        noise = float(rng.uniform(0.2, 0.4))
        ref, x = two_tone(n, cycles, [strong, weak], noise)
        swapped, y_swap = two_tone(n, cycles, [weak, strong], noise)
        made = [x, y_swap]
        for pair in others:
            made.append(two_tone(n, pair, [float(rng.uniform(3.0, 4.0)), float(rng.uniform(0.8, 1.4))], noise)[1])
        order = rng.permutation(4)
        names = ["series " + str(j + 1) for j in range(4)]
        channels = [series(synth.fourier_magnitude(x), name="spectrum")]
        channels += [series(made[int(order[j])], name=names[j]) for j in range(4)]
        keyed = names[int(np.flatnonzero(order == 0)[0])]
        wrong = [names[j] for j in range(4) if int(order[j]) != 0]
        items.append(mc_item(
            f"'spectrum' is the Fourier amplitude spectrum of one of the four series (each {n} samples, "
            "z-score normalised): the magnitude of the discrete Fourier transform with the DC term dropped, "
            f"so element i (0-based) is the frequency (i + 1)/{n} cycles per sample, i.e. (i + 1) full cycles "
            "over the series. Which series has this spectrum?",
            keyed, wrong, series=channels,
            rationale=(f"{keyed} is zscore({strong:.2f} * sine with {cycles[0]} cycles + {weak:.2f} * sine with "
                       f"{cycles[1]} cycles + noise) and 'spectrum' = fourier_magnitude of it: a tall peak at "
                       f"element {cycles[0] - 1} and a short one at {cycles[1] - 1}. One distractor has the same "
                       "cycles with the amplitudes swapped (tall and short peaks reversed); the others have "
                       + " and ".join(f"{p[0]} and {p[1]} cycles" for p in others) + "."),
            metadata={"n": n, "keyed_cycles": cycles, "amplitudes": [strong, weak], "distractor_cycles": others,
                      "keyed_channel": keyed, "keyed_labels": ref.labels},
        ))
    return items
