"""Which candidate repeats with the same period as the reference (TimeSeriesExam similarity analysis).

All series are periodic generator outputs (`synth.sine` / `synth.square` / `synth.sawtooth`) plus
white noise, with random shapes and phases; only the keyed candidate shares the reference's
period, the others are at least 1.3 times longer or shorter."""

PERIODIC = ["sine", "square", "sawtooth"]
RATIOS = [0.5, 2 / 3, 1.5, 2.0, 2.5]
SPARE_RATIOS = [3.0, 0.4, 3.5]


def wave(n, period):
    kind = PERIODIC[int(rng.integers(3))]
    amplitude = float(rng.uniform(1.0, 10.0))
    made = synth.add(synth.GENERATORS[kind](rng, n, period=float(period), amplitude=amplitude),
                     synth.white_noise(rng, n, sigma=amplitude * float(rng.uniform(0.1, 0.3)),
                                       mean=float(rng.uniform(-20.0, 60.0))))
    return made.values, kind


def far_apart(periods, candidate):
    return all(max(candidate, p) / min(candidate, p) >= 1.3 for p in periods)


def question(num_samples):
    items = []
    for _ in range(num_samples):
        p = int(rng.integers(8, 15))
        periods = [p]
        for r in [RATIOS[int(i)] for i in rng.permutation(len(RATIOS))]:
            c = int(round(p * r))
            if len(periods) < 4 and far_apart(periods, c):
                periods.append(c)
        for r in SPARE_RATIOS:
            c = int(round(p * r))
            if len(periods) < 4 and far_apart(periods, c):
                periods.append(c)
        n = int(min(300, max(120, 4 * max(periods) + int(rng.integers(0, 40)))))
        reference, ref_kind = wave(n, p)
        candidates = [wave(n, q) for q in periods]
        order = [int(i) for i in rng.permutation(4)]
        names = [f"candidate {k + 1}" for k in range(4)]
        channels = [series(reference, name="reference")]
        period_of = {}
        for position, index in enumerate(order):
            channels.append(series(candidates[index][0], name=names[position]))
            period_of[names[position]] = {"period": periods[index], "shape": candidates[index][1]}
        keyed = names[order.index(0)]
        items.append(mc_item(
            f"The reference and the four candidates ({n} samples each) are repeating patterns of different "
            "shapes plus noise. Which candidate repeats with the same period (cycle length) as the reference?",
            keyed, [name for name in names if name != keyed],
            series=channels,
            rationale=(f"The reference ({ref_kind}) has period {p}; {keyed} was generated with period {p}; "
                       "the others with periods "
                       + ", ".join(f"{v['period']} ({k})" for k, v in period_of.items() if k != keyed) + "."),
            metadata={"generator": "periodic patterns", "reference_period": p, "reference_shape": ref_kind,
                      "keyed": keyed, "candidates": period_of, "length": n},
        ))
    return items
