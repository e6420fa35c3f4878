"""Feature classification (Fons et al.): which kind of trend does the series show: steady or
accelerating, upward or downward, or none? Bound to synth.trend's kind and shape."""

OPTIONS = {
    "up_linear": "An upward trend rising at a steady (linear) rate",
    "up_accelerating": "An upward trend that starts flat and steepens over time (accelerating rise)",
    "down_linear": "A downward trend falling at a steady (linear) rate",
    "down_accelerating": "A downward trend that starts flat and steepens over time (accelerating fall)",
    "none": "No trend: values fluctuate around a constant level",
}


def question(num_samples):
    items = []
    keys = list(OPTIONS)
    for _ in range(num_samples):
        key = keys[int(rng.integers(len(keys)))]
        n = int(rng.integers(80, 201))
        noise = float(rng.uniform(0.5, 2.0))
        if key == "none":
            made = synth.trend(rng, n, kind="none", noise=noise)
        else:
            direction, pace = key.split("_")
            if pace == "linear":
                shape = "linear"
            else:
                shape = "quadratic" if rng.random() < 0.5 else "exponential"
            made = synth.trend(rng, n, kind=direction, shape=shape, change=float(rng.uniform(15.0, 30.0)) * noise,
                               noise=noise)
        labels = dict(made.labels)
        wrong = [OPTIONS[k] for k in keys if k != key]
        detail = (f"kind='{labels['kind']}', shape='{labels['shape']}', change {labels['change']:+.2f}, "
                  f"noise sd {noise:.2f}")
        items.append(mc_item(
            f"These are {n} daily observations of a series. Which description best fits its trend?",
            OPTIONS[key], wrong,
            series=[series(np.round(made.values, 2), name="value")],
            context=("A steady trend moves by about the same amount each day; an accelerating trend starts "
                     "almost flat and gets steeper towards the end (quadratic or exponential shape)."),
            rationale=f"Built with synth.trend({detail}), so the answer is: {OPTIONS[key]}.",
            metadata={"generator": "trend", "length": n, "labels": labels, "key": key},
        ))
    return items
