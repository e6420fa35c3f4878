"""The peak of the 7-day trailing mean of daily maximum temperature, shown next to the daily values.

A stretch is 20 to 41 days starting on any day of 2012-2015, so the same stretch, and the same key,
rarely comes back. The 7-day mean starts on the stretch's 7th day: every value of it is computed
from daily values that are shown."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(r) for r in ids])["temp_max"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        size = int(rng.integers(20, 42))
        start = int(rng.integers(0, len(whole) - size + 1))
        tmax = whole.iloc[start:start + size]
        smooth = tmax.rolling(7).mean().dropna()
        all_days = list(tmax.index.strftime("%Y-%m-%d"))
        days = list(smooth.index.strftime("%Y-%m-%d"))
        raw = tmax.to_numpy(dtype=float)
        avg = smooth.to_numpy(dtype=float)
        peak = float(avg.max())
        key, wrong = numeric_options(peak, spread=max(0.8, float(avg.std()) / 2), decimals=1, unit="°C")
        items.append(mc_item(
            f"The first series is the daily maximum temperature in Seattle from {all_days[0]} to {all_days[-1]} "
            "(°C); the second is its 7-day trailing mean, from the 7th day on (each day's value is the mean of "
            "that day and the 6 days before it). What is the highest value of the 7-day mean?",
            key, wrong,
            series=[series(raw, name="temp_max", timestamps=all_days, unit="°C"),
                    series(avg, name="temp_max 7-day mean", timestamps=days, unit="°C")],
            rationale=f"The 7-day mean peaks at {peak:.2f} °C on {days[int(np.argmax(avg))]}.",
            metadata={"record_ids": sorted({d[:7] for d in all_days}), "derived": {"temp_max 7-day mean": "rolling(7).mean() of temp_max"}},
        ))
    return items
