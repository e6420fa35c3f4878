"""White noise, autoregressive process or random walk: which stochastic process made this series
(TimeSeriesExam noise understanding). The keyed option's generator (`synth.white_noise`,
`synth.ar` with one positive coefficient, `synth.random_walk`) made it."""

DESCRIPTIONS = {
    "white_noise": "White noise: independent values with no memory, scattered around a fixed mean",
    "ar": "An AR(1) process: each value partly repeats the previous one, but it keeps returning to its mean",
    "random_walk": "A random walk: each value is the previous one plus a random step, so it wanders without a fixed mean",
}


def describe(labels):
    parts = []
    for key, value in labels.items():
        if key in ("family", "category", "kind"):
            continue
        if isinstance(value, list):
            parts.append(f"{key} " + "/".join(f"{v:.2f}" for v in value))
        elif isinstance(value, float):
            parts.append(f"{key} {value:.2f}")
        else:
            parts.append(f"{key} {value}")
    return ", ".join(parts)


def question(num_samples):
    items = []
    kinds = list(DESCRIPTIONS)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(150, 301))
        level = float(rng.uniform(-20.0, 20.0))
        sigma = float(rng.uniform(0.5, 2.0))
        if kind == "white_noise":
            made = synth.white_noise(rng, n, sigma=sigma, mean=level)
            values = made.values
        elif kind == "ar":
            phi = float(rng.uniform(0.5, 0.7))
            made = synth.ar(rng, n, coefficients=[phi], sigma=sigma)
            values = made.values + level
        else:
            made = synth.random_walk(rng, n, sigma=sigma, initial=level)
            values = made.values
        wrong = [DESCRIPTIONS[k] for k in kinds if k != kind]
        items.append(mc_item(
            f"This synthetic series ({n} samples) is a purely stochastic process (no deterministic trend or "
            "cycle). Which process generated it?",
            DESCRIPTIONS[kind], wrong,
            series=[series(values, name="value")],
            rationale=(f"Generated with synth.{kind} (" + describe(made.labels) + ")"
                       + (f", shifted to mean {level:.2f}" if kind == "ar" else "") + "."),
            metadata={"n_options": 3, "generator": kind, "length": n, "offset": level, "labels": made.labels},
        ))
    return items
