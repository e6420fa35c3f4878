"""Mean of the daily high temperature over a stretch, from the plotted temperatures."""

CHANNELS = {"temp_max": "daily high", "temp_min": "daily low"}


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 20))
        a = int(rng.integers(0, len(frame) - k + 1))
        part = frame.iloc[a:a + k]
        dates = list(part.index.strftime("%Y-%m-%d"))
        lows = part["temp_min"].to_numpy(dtype=float)
        shown = series(lows, name="temp_max", timestamps=dates, unit="°C")
        answer = float(np.mean(shown["values"]))
        key, wrong = numeric_options(answer, spread=1.0, decimals=1, unit="°C")
        items.append(mc_item(
            f"The series is the {CHANNELS['temp_max']} temperature in Seattle (°C) from {dates[0]} to {dates[-1]}. "
            "What is its mean?",
            key, wrong,
            series=[shown],
            rationale=f"Mean of the plotted values: {answer:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
