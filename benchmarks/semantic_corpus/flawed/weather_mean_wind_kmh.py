"""Mean wind speed of a stretch, shown in km/h."""

KMH_PER_MS = 3.6


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 22))
        a = int(rng.integers(0, len(frame) - k + 1))
        wind = frame["wind"].to_numpy(dtype=float)[a:a + k]
        shown = wind * KMH_PER_MS
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        mean = float(wind.mean())
        try:
            key, wrong = numeric_options(mean, spread=0.6, decimals=1, unit="km/h", low=0)
        except ValueError:
            continue
        items.append(mc_item(
            f"Mean daily wind speed in Seattle (km/h) from {dates[0]} to {dates[-1]}. What is the average over "
            "these days, in km/h?",
            key, wrong,
            series=[series(shown, name="wind", timestamps=dates, unit="km/h")],
            rationale=f"The average wind speed is {mean:.2f} km/h.",
            metadata={"record_ids": [rid]},
        ))
    return items
