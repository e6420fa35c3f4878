"""True or false: the daily minimum temperature fell below a given value on some day of a stretch."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"])
    frame = pd.concat([handler.series(r) for r in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n = int(rng.integers(7, 22))
        start = int(rng.integers(0, len(frame) - n + 1))
        tmin = frame["temp_min"].iloc[start:start + n]
        lowest = float(frame["temp_max"].iloc[start:start + n].min())
        level = round(lowest + float(rng.choice([-1.5, -1.0, -0.5, 0.5, 1.0, 1.5])), 1)
        days = list(tmin.index.strftime("%Y-%m-%d"))
        items.append(tf_item(
            f"Daily minimum temperature (°C) in Seattle from {days[0]} to {days[-1]}. True or false: on at least one "
            f"of these days the minimum temperature was below {level:.1f} °C.",
            lowest < level,
            series=[series(tmin.to_numpy(), name="temp_min", timestamps=days, unit="°C")],
            rationale=f"The lowest minimum was {lowest:.1f} °C.",
            metadata={"record_ids": sorted({d[:7] for d in days})},
        ))
    return items
