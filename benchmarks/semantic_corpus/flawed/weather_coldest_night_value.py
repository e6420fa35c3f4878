"""Lowest daily maximum temperature (the coldest afternoon) in a stretch of a winter month."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["month"].isin([11, 12, 1, 2, 3])]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 21))
        a = int(rng.integers(0, len(frame) - n + 1))
        tmax = frame["temp_max"].to_numpy(dtype=float)[a:a + n]
        tmin = frame["temp_min"].to_numpy(dtype=float)[a:a + n]
        coldest = float(np.min(tmin))
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        try:
            key, wrong = numeric_options(coldest, spread=1.5, decimals=1, unit="°C", step=5 / 9)
        except ValueError:
            continue
        items.append(mc_item(
            f"Daily maximum temperatures in Seattle from {dates[0]} to {dates[-1]} (°C). What was the lowest "
            "daily maximum in this period?",
            key, wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The coldest day of the stretch reached only {coldest:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
