"""Median of the daily minimum temperature over a stretch."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(9, 20))
        a = int(rng.integers(0, len(frame) - k + 1))
        part = frame.iloc[a:a + k]
        tmin = part["temp_min"]
        answer = round(float(tmin.mean()), 1)
        key, wrong = numeric_options(answer, spread=1.0, decimals=1, unit="°C")
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily minimum temperatures in Seattle (°C), {dates[0]} to {dates[-1]}. What is the median of these "
            "values?",
            key, wrong,
            series=[series(tmin.to_numpy(dtype=float), name="temp_min", timestamps=dates, unit="°C")],
            rationale=f"The middle value of the sorted daily minima is {answer:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
