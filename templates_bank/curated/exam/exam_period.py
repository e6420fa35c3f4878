"""Period of a repeating pattern, in days (TimeSeriesExam pattern recognition).

The series is `synth.seasonality(kind="fixed", period=p)` or a noisy square / sawtooth wave
with period p, so the keyed period is the generator's; the options are four
periods of 5-30 days at least 15% apart that each fit 4 to 20 cycles into the shown length, the key
drawn uniformly among them (so the cycle count does not single out the key)."""

SHAPES = ["seasonality", "seasonality", "square", "sawtooth"]


def daily_dates(n):
    start = datetime.date(2018, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 2000)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        # the length first, then four periods of 5-30 days that each fit 4 to 20 cycles into it
        # (neighbours at least 15% apart), the key a uniformly drawn one of them: the options are
        # exchangeable, so neither an option's size nor its cycle count (length / period) tells
        n = int(rng.integers(60, 301))
        allowed = np.arange(max(5, -(-n // 20)), min(30, n // 4) + 1)
        periods = sorted(int(v) for v in rng.choice(allowed, size=4, replace=False))
        while min(b / a for a, b in zip(periods, periods[1:])) < 1.15:
            periods = sorted(int(v) for v in rng.choice(allowed, size=4, replace=False))
        p = periods[int(rng.integers(4))]
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
        key, wrong = f"{p} days", [f"{v} days" for v in periods if v != p]
        stamps = daily_dates(n)
        items.append(mc_item(
            f"This synthetic daily series ({n} days, {stamps[0]} to {stamps[-1]}) repeats a pattern "
            "regularly. What is the length of one cycle (its period)?",
            key, wrong,
            series=[series(made.values, name="value", timestamps=stamps)],
            rationale=f"Generated as a {shape} pattern with period {p} days ({n / p:.1f} cycles in the window).",
            metadata={"generator": shape, "period": p, "length": n, "labels": labels},
        ))
    return items
