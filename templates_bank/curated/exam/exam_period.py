"""Period of a repeating pattern, in days (TimeSeriesExam pattern recognition).

The series is `synth.seasonality(kind="fixed", period=p)` or a noisy square / sawtooth wave
with period p, so the keyed period is the generator's; distractors are simple multiples and
fractions of it (the usual confusions: half, double, one and a half cycles)."""

SHAPES = ["seasonality", "seasonality", "square", "sawtooth"]


def daily_dates(n):
    start = datetime.date(2018, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 2000)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def distractors(p, n):
    candidates = [2 * p, int(round(p / 2)), int(round(1.5 * p)), int(round(2 * p / 3)), 3 * p, int(round(p / 3))]
    out = []
    for c in candidates:
        if c >= 2 and c != p and c not in out and c <= n // 2:
            out.append(c)
    picks = [out[int(i)] for i in rng.permutation(len(out))[:3]]
    return picks


def question(num_samples):
    items = []
    for _ in range(num_samples):
        p = int(rng.integers(5, 31))
        cycles = int(rng.integers(max(4, -(-60 // p)), min(12, 300 // p) + 1))
        n = min(300, p * cycles + int(rng.integers(0, p)))
        shape = SHAPES[int(rng.integers(len(SHAPES)))]
        if shape == "seasonality":
            made = synth.seasonality(rng, n, kind="fixed", period=float(p))
            labels = made.labels
        else:
            amplitude = float(rng.uniform(2.0, 8.0))
            wave = synth.GENERATORS[shape](rng, n, period=float(p), amplitude=amplitude)
            made = synth.add(wave, synth.white_noise(rng, n, sigma=amplitude * float(rng.uniform(0.15, 0.3)),
                                                     mean=float(rng.uniform(10.0, 60.0))))
            labels = made.labels
        wrong = distractors(p, n)
        stamps = daily_dates(n)
        items.append(mc_item(
            f"This synthetic daily series ({n} days, {stamps[0]} to {stamps[-1]}) repeats a pattern "
            "regularly. What is the length of one cycle (its period)?",
            f"{p} days", [f"{w} days" for w in wrong],
            series=[series(made.values, name="value", timestamps=stamps)],
            rationale=f"Generated as a {shape} pattern with period {p} days ({n / p:.1f} cycles in the window).",
            metadata={"generator": shape, "period": p, "length": n, "labels": labels},
        ))
    return items
