"""The peak of the 7-day trailing mean of daily maximum temperature, shown next to the daily values."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        tmax = frame["temp_max"]
        smooth = tmax.rolling(7).mean().dropna()
        days = list(smooth.index.strftime("%Y-%m-%d"))
        raw = tmax.loc[smooth.index].to_numpy(dtype=float)
        avg = smooth.to_numpy(dtype=float)
        peak = float(avg.max())
        key, wrong = numeric_options(peak, spread=max(0.8, float(avg.std()) / 2), decimals=1, unit="°C")
        items.append(mc_item(
            f"The first series is the daily maximum temperature in Seattle from {days[0]} to {days[-1]} (°C); "
            "the second is its 7-day trailing mean (each day's value is the mean of that day and the 6 days "
            "before it). What is the highest value of the 7-day mean?",
            key, wrong,
            series=[series(raw, name="temp_max", timestamps=days, unit="°C"),
                    series(avg, name="temp_max 7-day mean", timestamps=days, unit="°C")],
            rationale=f"The 7-day mean peaks at {peak:.2f} °C on {days[int(np.argmax(avg))]}.",
            metadata={"record_ids": [rid], "derived": {"temp_max 7-day mean": "rolling(7).mean() of temp_max"}},
        ))
    return items
