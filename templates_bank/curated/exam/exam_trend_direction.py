"""What is the overall trend of a noisy series: up, down, none, or a turn (TimeSeriesExam pattern recognition).

Every option is bound to a generator that makes it true: "up"/"down"/"none" come from
`synth.trend(kind=...)`, the turns from two straight legs joined with `synth.concatenate`
plus `synth.white_noise`.
"""

DESCRIPTIONS = {
    "up": "An upward trend: the level rises over the period",
    "down": "A downward trend: the level falls over the period",
    "none": "No trend: it fluctuates around a constant level",
    "up_down": "It rises first, then falls (a peak in the middle)",
    "down_up": "It falls first, then rises (a trough in the middle)",
}


def daily_dates(n):
    start = datetime.date(2019, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 1800)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def turn_series(kind, n):
    """Two straight legs (each moving 8 to 15 noise sd) meeting at 40-60% of the series, plus noise."""
    noise = float(rng.uniform(0.5, 2.0))
    level = float(rng.uniform(20.0, 100.0))
    first = int(rng.integers(int(0.4 * n), int(0.6 * n) + 1))
    second = n - first
    sign = 1.0 if kind == "up_down" else -1.0
    rise = sign * float(rng.uniform(8.0, 15.0)) * noise
    fall = -sign * float(rng.uniform(8.0, 15.0)) * noise
    leg1 = synth.linear(rng, first, slope=rise / first, intercept=level)
    leg2 = synth.linear(rng, second, slope=fall / second, intercept=level + rise)
    path = synth.concatenate(leg1, leg2)
    made = synth.add(path, synth.white_noise(rng, n, sigma=noise))
    labels = {"kind": kind, "turn_index": first, "change_first_leg": rise, "change_second_leg": fall,
              "noise": noise, "components": made.labels["components"]}
    return made.values, labels


def question(num_samples):
    items = []
    for _ in range(num_samples):
        # the options are up, down, none and one of the turns; the key is uniform over them
        shown = ["up", "down", "none", ["up_down", "down_up"][int(rng.integers(2))]]
        kind = shown[int(rng.integers(len(shown)))]
        n = int(rng.integers(60, 241))
        if kind in ("up_down", "down_up"):
            values, labels = turn_series(kind, n)
        else:
            made = synth.trend(rng, n, kind=kind)
            values, labels = made.values, made.labels
        wrong = [DESCRIPTIONS[k] for k in shown if k != kind]
        stamps = daily_dates(n)
        items.append(mc_item(
            f"This is a synthetic daily series ({n} days, {stamps[0]} to {stamps[-1]}). "
            "Which description best fits its overall trend?",
            DESCRIPTIONS[kind], wrong,
            series=[series(values, name="value", timestamps=stamps)],
            rationale=(f"Generated with kind '{kind}'"
                       + (f" ({labels['shape']} trend, total change {labels['change']:.1f}, noise sd {labels['noise']:.2f})"
                          if kind in ("up", "down") else "")
                       + (f" (legs change {labels['change_first_leg']:.1f} then {labels['change_second_leg']:.1f}, "
                          f"turning at index {labels['turn_index']}, noise sd {labels['noise']:.2f})"
                          if kind in ("up_down", "down_up") else "")
                       + "."),
            metadata={"generator": "trend" if kind in ("up", "down", "none") else "concatenate(linear, linear) + white_noise",
                      "kind": kind, "length": n, "labels": labels},
        ))
    return items
