"""True/false (Fons et al. feature detection): does the series have a trend? The series is
synth.trend with kind "up", "down" (linear, quadratic or exponential shape) or "none"."""

CLAIMS = [
    ("This series has a trend: a sustained upward or downward movement over the period shown.", True),
    ("This series shows a clear trend (it drifts persistently up or down rather than staying level).", True),
    ("This series has no trend: it fluctuates around a constant level.", False),
    ("There is no sustained upward or downward movement in this series; only noise around a fixed level.", False),
]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(60, 201))
        kind = "none" if rng.random() < 0.5 else ("up" if rng.random() < 0.5 else "down")
        noise = float(rng.uniform(0.5, 2.0))
        if kind == "none":
            made = synth.trend(rng, n, kind="none", noise=noise)
        else:
            shape = ["linear", "quadratic", "exponential"][int(rng.integers(3))]
            made = synth.trend(rng, n, kind=kind, shape=shape, change=float(rng.uniform(12.0, 25.0)) * noise,
                               noise=noise)
        labels = dict(made.labels)
        claim, claims_trend = CLAIMS[int(rng.integers(len(CLAIMS)))]
        has_trend = kind != "none"
        if has_trend:
            why = (f"synth.trend(kind='{kind}', shape='{labels['shape']}'): the trend moves {labels['change']:+.2f} "
                   f"from first to last sample, {abs(labels['change']) / noise:.0f} times the noise sd {noise:.2f}")
        else:
            why = (f"synth.trend(kind='none'): level {labels['level']:.2f} plus Gaussian noise (sd {noise:.2f}), "
                   "no trend")
        items.append(tf_item(
            f"{claim} ({n} daily observations.)",
            has_trend == claims_trend,
            series=[series(np.round(made.values, 2), name="value")],
            rationale=f"Built with {why}; the statement is {'true' if has_trend == claims_trend else 'false'}.",
            metadata={"generator": "trend", "length": n, "labels": labels, "claims_trend": claims_trend},
        ))
    return items
