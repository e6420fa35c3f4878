"""How many days of a stretch had more than 2 mm of precipitation?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(12, 25))
        a = int(rng.integers(0, len(frame) - n + 1))
        rain = frame["precipitation"].to_numpy(dtype=float)[a:a + n]
        heavy = rain > 2.0
        count = int(round(rain[heavy].sum()))
        if count == 0:
            continue
        try:
            key, wrong = numeric_options(count, spread=max(2, count // 5), decimals=0, low=0)
        except ValueError:
            continue
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) from {dates[0]} to {dates[-1]}. On how many of these days did "
            "more than 2 mm fall?",
            key, wrong,
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"Days above 2 mm: {count}.",
            metadata={"record_ids": [rid]},
        ))
    return items
