"""True or false: the mean daily temperature range (max minus min) of a stretch exceeds a threshold.

The threshold is the true mean moved up or down by 0.4 to 1.5 °C (direction drawn 50/50) and
rounded to 0.5 °C, so it is as likely above as below the truth."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(8, 16))
        a = int(rng.integers(0, len(frame) - k + 1))
        part = frame.iloc[a:a + k]
        hi = part["temp_max"].to_numpy(dtype=float)
        lo = part["temp_min"].to_numpy(dtype=float)
        mean_range = float((hi - lo).mean())
        sign = 1 if rng.random() < 0.5 else -1
        threshold = round((mean_range + sign * float(rng.uniform(0.4, 1.5))) * 2) / 2
        if abs(threshold - mean_range) < 0.3:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(tf_item(
            f"These are Seattle's daily maximum and minimum temperatures (°C) from {dates[0]} to {dates[-1]}. "
            f"Averaged over these days, the daily range (maximum minus minimum) is greater than {threshold:.1f} °C.",
            mean_range > threshold,
            series=[series(hi, name="temp_max", timestamps=dates, unit="°C"),
                    series(lo, name="temp_min", timestamps=dates, unit="°C")],
            rationale=f"The mean daily range is {mean_range:.2f} °C against the threshold {threshold:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
