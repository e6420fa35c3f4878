"""Largest rise of the daily maximum temperature from one day to the next, in a stretch."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 20))
        a = int(rng.integers(0, len(frame) - n + 1))
        tmax = frame["temp_max"].to_numpy(dtype=float)[a:a + n]
        rise = float(tmax.max() - tmax.min())
        try:
            key, wrong = numeric_options(rise, spread=1.2, decimals=1, unit="°C", low=0, step=5 / 9)
        except ValueError:
            continue
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        items.append(mc_item(
            f"Daily maximum temperatures in Seattle (°C) from {dates[0]} to {dates[-1]}. What was the largest "
            "increase from one day to the next?",
            key, wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The largest day-to-day increase is {rise:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
