"""Which base pattern (sine, sawtooth, square, linear, exponential) generated a series (TimeSeriesExam
pattern recognition). The series is built by the keyed pattern's generator, plus faint noise."""

NAMES = {
    "sine": "Sine wave",
    "sawtooth": "Sawtooth wave",
    "square": "Square wave",
    "linear": "Linear (straight-line) trend",
    "exponential": "Exponential growth or decay",
}


def make(kind, n):
    if kind in ("sine", "sawtooth", "square"):
        cycles = float(rng.uniform(3.0, 8.0))
        period = float(max(12, int(round(n / cycles))))
        amplitude = float(rng.uniform(1.0, 10.0))
        phase = float(rng.uniform(0.0, 2 * math.pi))
        base = synth.GENERATORS[kind](rng, n, period=period, amplitude=amplitude, phase=phase)
        spread = 2 * amplitude
    elif kind == "linear":
        base = synth.linear(rng, n)
        spread = abs(base.labels["slope"]) * (n - 1)
    else:
        rate = (1 if rng.random() < 0.5 else -1) * float(rng.uniform(2.5, 4.0)) / (n - 1)
        base = synth.exponential(rng, n, rate=rate)
        spread = abs(base.values[-1] - base.values[0])
    level = float(rng.uniform(-20.0, 50.0)) if kind in ("sine", "sawtooth", "square") else 0.0
    noise = synth.white_noise(rng, n, sigma=0.02 * spread, mean=level)
    return synth.add(base, noise), base.labels


def question(num_samples):
    items = []
    kinds = list(NAMES)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(80, 241))
        made, labels = make(kind, n)
        wrong = [NAMES[k] for k in kinds if k != kind]
        detail = ", ".join(f"{k} {v:.3g}" for k, v in labels.items() if isinstance(v, float))
        items.append(mc_item(
            f"This synthetic series ({n} samples) was generated from a single base pattern plus faint "
            "measurement noise (and possibly a constant offset). Which base pattern is it?",
            NAMES[kind], wrong,
            series=[series(made.values, name="value")],
            rationale=f"Built with synth.{kind} ({detail}) plus white noise of sd 2% of the pattern's range.",
            metadata={"generator": kind, "length": n, "labels": labels},
        ))
    return items
