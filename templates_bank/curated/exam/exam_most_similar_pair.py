"""Which two of four series are most alike in shape (TimeSeriesExam similarity analysis).

The keyed pair are two draws of one generator setting (same periodic pattern, period and phase,
or the same AR path) at different levels and scales with their own noise; the other two series
come from different settings (other patterns at clearly different periods, or independent AR paths)."""

PERIODIC = ["sine", "square", "sawtooth"]


def periodic(kind, n, period, phase):
    amplitude = float(rng.uniform(1.0, 10.0))
    made = synth.add(synth.GENERATORS[kind](rng, n, period=float(period), amplitude=amplitude, phase=float(phase)),
                     synth.white_noise(rng, n, sigma=0.1 * amplitude, mean=float(rng.uniform(-30.0, 60.0))))
    return made.values


def rescaled(path):
    scale = float(rng.uniform(0.3, 3.0))
    noise = synth.white_noise(rng, len(path), sigma=0.15 * scale * float(np.std(path)),
                              mean=float(rng.uniform(-30.0, 60.0)))
    return np.asarray(path) * scale + noise.values


def pair_text(a, b):
    return f"series {a + 1} and series {b + 1}"


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 201))
        if rng.random() < 0.6:
            variant = "periodic"
            base = int(rng.integers(10, 17))
            periods = [base, int(round(base * 1.5)), int(round(base * 2.3))]
            periods = [periods[int(i)] for i in rng.permutation(3)]
            n = max(n, 4 * max(periods))
            kinds = [PERIODIC[int(rng.integers(3))] for unused in range(3)]
            phase = float(rng.uniform(0.0, 2 * math.pi))
            made = [periodic(kinds[0], n, periods[0], phase), periodic(kinds[0], n, periods[0], phase),
                    periodic(kinds[1], n, periods[1], float(rng.uniform(0.0, 2 * math.pi))),
                    periodic(kinds[2], n, periods[2], float(rng.uniform(0.0, 2 * math.pi)))]
            roles = [f"{kinds[0]} period {periods[0]}", f"{kinds[0]} period {periods[0]} (same phase)",
                     f"{kinds[1]} period {periods[1]}", f"{kinds[2]} period {periods[2]}"]
        else:
            variant = "ar"
            phi = float(rng.uniform(0.8, 0.9))
            path = synth.ar(rng, n, coefficients=[phi], sigma=1.0).values
            made = [rescaled(path), rescaled(path), rescaled(synth.ar(rng, n, coefficients=[phi], sigma=1.0).values),
                    rescaled(synth.ar(rng, n, coefficients=[phi], sigma=1.0).values)]
            roles = ["shared AR path", "shared AR path", "independent AR path", "independent AR path"]
        order = [int(i) for i in rng.permutation(4)]  # order[position] = which generated series is shown there
        a, b = sorted([order.index(0), order.index(1)])
        others = [(i, j) for i in range(4) for j in range(i + 1, 4) if (i, j) != (a, b)]
        wrong = [others[int(k)] for k in rng.permutation(len(others))[:3]]
        channels = [series(made[order[position]], name=f"series {position + 1}") for position in range(4)]
        items.append(mc_item(
            f"Here are four synthetic series ({n} samples each) at different levels and scales. Ignoring level and "
            "scale (compare their z-scored shapes), which two series are the most similar to each other?",
            pair_text(a, b), [pair_text(i, j) for i, j in wrong],
            series=channels,
            rationale=(f"Series {a + 1} and {b + 1} come from the same generator setting ({roles[0]}); the others: "
                       + "; ".join(f"series {position + 1}: {roles[order[position]]}" for position in range(4)
                                   if order[position] >= 2) + "."),
            metadata={"generator": variant, "keyed_pair": [a + 1, b + 1], "length": n,
                      "roles": {f"series {position + 1}": roles[order[position]] for position in range(4)}},
        ))
    return items
