"""Additive versus multiplicative composition of trend and seasonality (TimeSeriesExam pattern
recognition). Each option is one composition of `synth.linear` and `synth.sine` with the
`synth.add` / `synth.multiply` operators; the keyed one built the series."""

DESCRIPTIONS = {
    "additive": "Additive: trend + seasonal cycle, the seasonal swings keep the same size",
    "multiplicative": "Multiplicative: trend x seasonal cycle, the swings grow or shrink with the level",
    "trend_only": "Trend only: no seasonal cycle",
    "seasonal_only": "Seasonal cycle only: no trend",
}


def build(kind, n):
    period = float(rng.integers(8, n // 6 + 1))
    start = float(rng.uniform(10.0, 30.0))
    ratio = float(rng.uniform(3.0, 5.0))
    low, high = start, start * ratio
    if rng.random() < 0.5:
        low, high = high, low
    mean_level = (low + high) / 2
    noise_sd = 0.03 * mean_level
    trend = synth.linear(rng, n, slope=(high - low) / (n - 1), intercept=low)
    flat = synth.linear(rng, n, slope=0.0, intercept=mean_level)
    if kind == "additive":
        season = synth.sine(rng, n, period=period, amplitude=0.3 * mean_level)
        core = synth.add(trend, season)
    elif kind == "multiplicative":
        season = synth.sine(rng, n, period=period, amplitude=0.3)
        core = synth.multiply(trend, synth.add(synth.linear(rng, n, slope=0.0, intercept=1.0), season))
    elif kind == "trend_only":
        core = trend
    else:
        season = synth.sine(rng, n, period=period, amplitude=0.3 * mean_level)
        core = synth.add(flat, season)
    made = synth.add(core, synth.white_noise(rng, n, sigma=noise_sd))
    truth = {"kind": kind, "period": period if kind != "trend_only" else None,
             "level_start": low if kind != "seasonal_only" else mean_level,
             "level_end": high if kind != "seasonal_only" else mean_level, "noise": noise_sd}
    return made, truth


def question(num_samples):
    items = []
    kinds = list(DESCRIPTIONS)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(120, 241))
        made, truth = build(kind, n)
        wrong = [DESCRIPTIONS[k] for k in kinds if k != kind]
        items.append(mc_item(
            f"This synthetic series ({n} samples) may combine a trend and a seasonal cycle. "
            "How are its components combined?",
            DESCRIPTIONS[kind], wrong,
            series=[series(made.values, name="value")],
            rationale=(f"Built as '{kind}': level from {truth['level_start']:.1f} to {truth['level_end']:.1f}"
                       + (f", period {truth['period']:.0f} samples" if truth["period"] else "")
                       + (", seasonal amplitude 0.3 x the trend level" if kind == "multiplicative" else "")
                       + (", seasonal amplitude 0.3 x the mean level" if kind in ("additive", "seasonal_only") else "")
                       + f", noise sd {truth['noise']:.2f}."),
            metadata={"generator": "linear/sine with add/multiply", "length": n, "truth": truth,
                      "labels": made.labels},
        ))
    return items
