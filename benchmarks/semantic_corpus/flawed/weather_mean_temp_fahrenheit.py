"""Mean daily maximum temperature in degrees Fahrenheit."""


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
        tmax = frame["temp_max"].to_numpy(dtype=float)[a:a + k]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        mean = float(tmax.mean())
        key, wrong = numeric_options(mean, spread=1.2, decimals=1, unit="°F")
        items.append(mc_item(
            f"Daily maximum temperature in Seattle (°F) from {dates[0]} to {dates[-1]}. What is the mean of "
            "these daily maxima?",
            key, wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°F")],
            rationale=f"The mean is {mean:.2f} °F.",
            metadata={"record_ids": [rid]},
        ))
    return items
