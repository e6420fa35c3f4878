"""Highest daily maximum temperature of a month, with a short climate summary as context."""


def question(num_samples):
    rec = handler.records().set_index("record_id")
    ids = rec.index.tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        tmax = frame["temp_max"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        row = rec.loc[rid]
        peak = float(tmax.max())
        try:
            key, wrong = numeric_options(peak, spread=1.5, decimals=1, unit="°C", step=5 / 9)
        except ValueError:
            continue
        summary = (f"Monthly summary for Seattle, {rid}: {int(row['rainy_days'])} days with precipitation, "
                   f"{row['total_precip_mm']:.1f} mm in total; daily maxima from {row['min_temp_c']:.1f} °C "
                   f"(lowest minimum) up to {peak:.1f}°C; mean wind {row['mean_wind_ms']:.1f} m/s.")
        items.append(mc_item(
            f"The series is the daily maximum temperature in Seattle for {rid} (°C). What was the month's highest "
            "daily maximum?",
            key, wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            context=summary,
            rationale=f"The largest value of the series is {peak:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
