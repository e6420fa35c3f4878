"""By how much did the daily minimum temperature change between two given days of a stretch.

Temperatures are whole degrees Fahrenheit written in Celsius, so differences lie on steps of
5/9 °C; the distractors are on the same steps."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        tmin = frame["temp_min"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        i, j = sorted(int(x) for x in rng.choice(len(tmin), size=2, replace=False))
        if j - i < 3:
            continue
        change = float(tmin[j] - tmin[i])
        try:
            key, wrong = numeric_options(change, spread=1.5, decimals=1, unit="°C", step=5 / 9)
        except ValueError:
            continue
        items.append(mc_item(
            f"Daily minimum temperature in Seattle for {rid} (°C). By how much did it change from {dates[i]} "
            f"to {dates[j]} (later minus earlier; negative means it fell)?",
            key, wrong,
            series=[series(tmin, name="temp_min", timestamps=dates, unit="°C")],
            rationale=f"{tmin[j]:.1f} - {tmin[i]:.1f} = {change:.1f} °C.",
            metadata={"record_ids": [rid], "from": dates[i], "to": dates[j]},
        ))
    return items
