"""Which candidate has the same shape as the reference once level and scale are removed (z-scoring)
(TimeSeriesExam similarity analysis).

The matching candidate is the reference's own generator output (same pattern, period and phase,
or the same AR path) at another level and scale with a little fresh noise; the distractors come
from other generators: the same pattern at another period, another pattern at the same period
and phase, or independent AR paths."""

PERIODIC = ["sine", "square", "sawtooth"]


def periodic(kind, n, period, phase, noise_share):
    amplitude = float(rng.uniform(1.0, 10.0))
    wave = synth.GENERATORS[kind](rng, n, period=float(period), amplitude=amplitude, phase=float(phase))
    return synth.add(wave, synth.white_noise(rng, n, sigma=noise_share * amplitude,
                                             mean=float(rng.uniform(-30.0, 60.0)))).values


def rescaled(path, noise_share):
    """`path` at a new level and scale, plus fresh white noise."""
    n = len(path)
    scale = float(rng.uniform(0.3, 3.0))
    spread = float(np.std(path)) * scale
    noise = synth.white_noise(rng, n, sigma=noise_share * spread, mean=float(rng.uniform(-30.0, 60.0)))
    return np.asarray(path) * scale + noise.values


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 201))
        if rng.random() < 0.6:
            variant = "periodic"
            kind = PERIODIC[int(rng.integers(3))]
            period = int(rng.integers(12, n // 5 + 1))
            phase = float(rng.uniform(0.0, 2 * math.pi))
            reference = periodic(kind, n, period, phase, 0.05)
            other_kinds = [k for k in PERIODIC if k != kind]
            other_period = int(round(period * float(rng.uniform(1.6, 2.2)))) if period * 1.6 <= n / 3 else \
                int(round(period / float(rng.uniform(1.6, 2.2))))
            other_period = max(other_period, 8)
            candidates = [
                periodic(kind, n, period, phase, 0.1),
                periodic(kind, n, other_period, float(rng.uniform(0.0, 2 * math.pi)), 0.1),
                periodic(other_kinds[0], n, period, phase, 0.1),
                periodic(other_kinds[1], n, other_period, float(rng.uniform(0.0, 2 * math.pi)), 0.1),
            ]
            roles = [f"{kind}, period {period}, same phase (match)", f"{kind}, period {other_period}",
                     f"{other_kinds[0]}, period {period}, same phase", f"{other_kinds[1]}, period {other_period}"]
            truth = {"kind": kind, "period": period, "phase": phase, "other_period": other_period}
        else:
            variant = "ar"
            phi = float(rng.uniform(0.8, 0.9))
            path = synth.ar(rng, n, coefficients=[phi], sigma=1.0).values
            reference = rescaled(path, 0.05)
            candidates = [rescaled(path, 0.15)]
            for unused in range(3):
                candidates.append(rescaled(synth.ar(rng, n, coefficients=[phi], sigma=1.0).values, 0.15))
            roles = ["the reference's AR path, rescaled (match)", "independent AR path", "independent AR path",
                     "independent AR path"]
            truth = {"kind": "ar", "phi": phi}
        order = [int(i) for i in rng.permutation(4)]
        names = [f"candidate {k + 1}" for k in range(4)]
        channels = [series(reference, name="reference")]
        role_of = {}
        for position, index in enumerate(order):
            channels.append(series(candidates[index], name=names[position]))
            role_of[names[position]] = roles[index]
        keyed = names[order.index(0)]
        items.append(mc_item(
            f"Compare the reference series with the four candidates ({n} samples each). After z-scoring every "
            "series (subtract its mean, divide by its standard deviation), which candidate follows the same "
            "shape as the reference, point by point?",
            keyed, [name for name in names if name != keyed],
            series=channels,
            rationale=(f"{keyed} was generated from the same "
                       + ("AR path" if variant == "ar" else "periodic pattern (shape, period and phase)")
                       + " as the reference (only level, scale and a little noise differ); the others: "
                       + "; ".join(f"{name}: {role}" for name, role in role_of.items() if name != keyed) + "."),
            metadata={"generator": variant, "keyed": keyed, "roles": role_of, "length": n, "truth": truth},
        ))
    return items
