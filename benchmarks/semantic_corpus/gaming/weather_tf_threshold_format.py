"""True or false: the mean daily maximum temperature of a stretch exceeded a threshold."""


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
        mean = float(tmax.mean())
        if rng.random() < 0.5:
            threshold, truth = f"{math.floor(mean) - int(rng.integers(0, 3))}", True
        else:
            threshold, truth = f"{mean + float(rng.uniform(0.2, 2.0)):.2f}", False
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        items.append(tf_item(
            f"Daily maximum temperature in Seattle (°C) from {dates[0]} to {dates[-1]}. The mean of these daily "
            f"maxima is above {threshold} °C.",
            truth,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The mean is {mean:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
