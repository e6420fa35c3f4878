"""The warmest daily mean temperature of a stretch of days, from hourly readings resampled to daily means."""


def question(num_samples):
    months = sorted(handler.records()["record_id"])
    hourly = pd.concat([handler.series(m) for m in months])["temp"]
    all_days = hourly.index.normalize().unique()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        n_days = int(rng.integers(7, 22))
        first = int(rng.integers(0, len(all_days) - n_days + 1))
        lo, hi = all_days[first], all_days[first + n_days - 1] + pd.Timedelta(hours=23)
        part = hourly[(hourly.index >= lo) & (hourly.index <= hi)]
        daily = part.resample("D").median()
        peak = float(daily.max())
        try:
            key, wrong = numeric_options(peak, spread=max(0.8, float(daily.std()) / 2), decimals=1, unit="°F")
        except ValueError:
            continue
        items.append(mc_item(
            f"The first series is the hourly air temperature (°F) in Seattle from {lo:%Y-%m-%d} to {hi:%Y-%m-%d}; "
            "the second gives each day's mean of its hourly readings. What was the highest daily mean temperature "
            "of these days?",
            key, wrong,
            series=[series(part.to_numpy(), name="temp", timestamps=[t.strftime("%Y-%m-%d %H:%M") for t in part.index],
                           unit="°F"),
                    series(daily.to_numpy(), name="daily mean temp", unit="°F",
                           timestamps=[t.strftime("%Y-%m-%d") for t in daily.index],
                           derived="daily mean of the hourly temp (resampled by day)")],
            rationale=f"The daily means peak at {peak:.2f} °F on {daily.idxmax():%Y-%m-%d}.",
            metadata={"record_ids": sorted({f"{t:%Y-%m}" for t in part.index})},
        ))
    return items
