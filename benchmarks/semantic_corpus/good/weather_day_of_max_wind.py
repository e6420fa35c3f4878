"""On which date of a stretch was the mean wind speed highest."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(12, 25))
        lo = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[lo:lo + n]
        wind = part["wind"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        top = np.sort(wind)[::-1]
        if top[0] - top[1] < 0.3:
            continue
        i = int(np.argmax(wind))
        others = [j for j in rng.permutation(n) if int(j) != i][:3]
        items.append(mc_item(
            f"Mean daily wind speed (m/s) in Seattle from {dates[0]} to {dates[-1]}. On which date was it highest?",
            dates[i], [dates[int(j)] for j in others],
            series=[series(wind, name="wind", timestamps=dates, unit="m/s")],
            rationale=f"The highest value, {wind[i]:.1f} m/s, is on {dates[i]}; the next highest is {top[1]:.1f} m/s.",
            metadata={"record_ids": [rid], "peak_wind_ms": float(wind[i])},
        ))
    return items
