"""Does the size of the random fluctuations stay constant, grow or shrink (TimeSeriesExam noise
understanding). Built with `synth.volatility(kind="constant" / "increasing")`; a shrinking
series is an increasing one in reverse time."""

DESCRIPTIONS = {
    "constant": "It stays about the same throughout",
    "increasing": "It grows steadily: fluctuations get larger over time",
    "decreasing": "It shrinks steadily: fluctuations get smaller over time",
}


def question(num_samples):
    items = []
    kinds = list(DESCRIPTIONS)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(200, 301))
        made = synth.volatility(rng, n, kind="constant" if kind == "constant" else "increasing")
        values = np.array(made.values)
        if kind == "decreasing":
            values = values[::-1]
        wrong = [DESCRIPTIONS[k] for k in kinds if k != kind]
        labels = made.labels
        detail = (f"sd {labels['sigma']:.2f} throughout" if kind == "constant" else
                  f"sd from {labels['sigma_start']:.2f} to {labels['sigma_end']:.2f}" if kind == "increasing" else
                  f"sd from {labels['sigma_end']:.2f} down to {labels['sigma_start']:.2f} (an increasing path reversed)")
        items.append(mc_item(
            f"This synthetic series shows {n} daily returns (%) of an asset, fluctuating around zero. "
            "How does the size of the fluctuations (the noise level) change over time?",
            DESCRIPTIONS[kind], wrong,
            series=[series(values, name="daily return", unit="%")],
            rationale=f"Generated with synth.volatility (kind '{labels['kind']}'): {detail}.",
            metadata={"n_options": 3, "generator": "volatility", "kind": kind, "reversed": kind == "decreasing", "length": n,
                      "labels": labels},
        ))
    return items
