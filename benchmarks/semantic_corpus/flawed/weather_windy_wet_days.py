"""How many days of a stretch had wind above a threshold."""

LIMITS = (2.5, 3.0, 3.5, 4.0)


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    out = []
    tries = 0
    while len(out) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 20))
        s = int(rng.integers(0, len(frame) - k + 1))
        part = frame.iloc[s:s + k]
        limit = LIMITS[int(rng.integers(len(LIMITS)))]
        wind = part["wind"].to_numpy(dtype=float)
        count = int((part["precipitation"] > limit).sum())
        try:
            key, wrong = numeric_options(count, spread=2, decimals=0, low=0, high=k)
        except ValueError:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        out.append(mc_item(
            f"Mean daily wind speed (m/s) in Seattle from {dates[0]} to {dates[-1]}. How many days had a wind "
            f"speed above {limit} m/s?",
            key, wrong,
            series=[series(wind, name="wind", timestamps=dates, unit="m/s")],
            rationale=f"Counting days above {limit} m/s gives {count}.",
            metadata={"record_ids": [rid]},
        ))
    return out
