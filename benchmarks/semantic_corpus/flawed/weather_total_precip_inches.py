"""Total precipitation of a stretch of days, in inches."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 25))
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        rain = part["precipitation"].to_numpy(dtype=float)
        total = float(rain.sum())
        if total < 2:
            continue
        key, wrong = numeric_options(total, spread=max(2.0, total * 0.2), decimals=1, unit="in", low=0)
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily precipitation in Seattle (inches) from {dates[0]} to {dates[-1]}. What was the total "
            "precipitation over these days, in inches?",
            key, wrong,
            series=[series(rain, name="precipitation", timestamps=dates, unit="in")],
            rationale=f"The daily values add up to {total:.2f} in.",
            metadata={"record_ids": [rid]},
        ))
    return items
