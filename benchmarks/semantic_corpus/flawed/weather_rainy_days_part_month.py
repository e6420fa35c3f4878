"""Number of days with measurable precipitation in part of a month."""


def question(num_samples):
    table = handler.records()
    ids = list(table["record_id"])
    rainy = dict(zip(table["record_id"], table["rainy_days"]))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        first = int(rng.integers(0, 8))
        last = int(rng.integers(len(frame) - 8, len(frame)))
        part = frame.iloc[first:last + 1]
        count = int(rainy[rid])
        try:
            key, wrong = numeric_options(count, spread=2, decimals=0, low=0, high=31)
        except ValueError:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) from {dates[0]} to {dates[-1]}. On how many of these days was "
            "there any precipitation (more than 0 mm)?",
            key, wrong,
            series=[series(part["precipitation"].to_numpy(dtype=float), name="precipitation", timestamps=dates,
                           unit="mm")],
            rationale=f"{count} days had precipitation above 0 mm.",
            metadata={"record_ids": [rid]},
        ))
    return items
