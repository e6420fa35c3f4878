"""Mean daily temperature (average of the daily maximum and minimum) on one day."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        hi = frame["temp_max"].to_numpy(dtype=float)
        lo = frame["temp_min"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        d = int(rng.integers(len(dates)))
        mean_temp = hi[d] + lo[d] / 2
        key, wrong = numeric_options(mean_temp, spread=1.5, decimals=1, unit="°C")
        items.append(mc_item(
            f"Daily maximum and minimum temperatures in Seattle for {rid} (°C). What was the mean daily "
            f"temperature (the average of the maximum and the minimum) on {dates[d]}?",
            key, wrong,
            series=[series(hi, name="temp_max", timestamps=dates, unit="°C"),
                    series(lo, name="temp_min", timestamps=dates, unit="°C")],
            rationale=f"({hi[d]:.1f} + {lo[d]:.1f}) / 2 = {mean_temp:.2f} °C.",
            metadata={"record_ids": [rid], "date": dates[d]},
        ))
    return items
