"""True or false: this series is pure white noise (TimeSeriesExam noise understanding).

True items come from `synth.white_noise`; false items add a faint but real structure to white
noise: a sine cycle, a linear trend, or autoregressive memory (`synth.ar`)."""

STRUCTURES = ["sine", "trend", "ar"]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 241))
        sigma = float(rng.uniform(0.5, 2.0))
        level = float(rng.uniform(-10.0, 40.0))
        is_noise = bool(rng.random() < 0.5)
        noise = synth.white_noise(rng, n, sigma=sigma, mean=level)
        if is_noise:
            made, structure, detail = noise, "none", "white noise only"
        else:
            structure = STRUCTURES[int(rng.integers(len(STRUCTURES)))]
            if structure == "sine":
                amplitude = float(rng.uniform(1.2, 2.0)) * sigma
                period = float(rng.integers(8, n // 4 + 1))
                made = synth.add(noise, synth.sine(rng, n, period=period, amplitude=amplitude))
                detail = f"a sine of amplitude {amplitude:.2f} ({amplitude / sigma:.1f} noise sd), period {period:.0f}"
            elif structure == "trend":
                change = (1 if rng.random() < 0.5 else -1) * float(rng.uniform(4.0, 8.0)) * sigma
                made = synth.add(noise, synth.linear(rng, n, slope=change / (n - 1), intercept=0.0))
                detail = f"a linear trend moving {change:.2f} ({change / sigma:.1f} noise sd) over the series"
            else:
                phi = float(rng.uniform(0.6, 0.8))
                memory = synth.ar(rng, n, coefficients=[phi], sigma=sigma)
                made = synth.add(memory, synth.linear(rng, n, slope=0.0, intercept=level))
                detail = f"an AR(1) process with coefficient {phi:.2f} instead of independent noise"
        items.append(tf_item(
            f"This synthetic series has {n} samples. True or false: it is pure white noise, i.e. independent "
            "random values around a constant level, with no trend, no cycle and no memory from one value to the next.",
            is_noise,
            series=[series(made.values, name="value")],
            rationale=f"Generated as white noise (sd {sigma:.2f})" + ("" if is_noise else f" with {detail}") + ".",
            metadata={"generator": "white_noise" if is_noise else structure, "structure": structure,
                      "length": n, "labels": made.labels},
        ))
    return items
