"""Mean daily precipitation of a stretch of days."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 25))
        a = int(rng.integers(0, len(frame) - k + 1))
        rain = frame["precipitation"].to_numpy(dtype=float)[a:a + k]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        total = float(rain.sum())
        if total < 5:
            continue
        mean = total / k
        try:
            key, wrong = numeric_options(mean, spread=max(0.3, mean * 0.3), decimals=2, unit="mm/day", low=0)
        except ValueError:
            continue
        items.append(mc_item(
            f"Seattle received {total:.1f} mm of precipitation over the {k} days from {dates[0]} to {dates[-1]} "
            "(series: daily precipitation, mm). What was the mean daily precipitation?",
            key, wrong,
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"{total:.1f} mm / {k} days = {mean:.2f} mm/day.",
            metadata={"record_ids": [rid]},
        ))
    return items
