"""Mean wind speed over a stretch of one month."""

seen = {}


def window_mean(rid, values):
    if rid not in seen:
        seen[rid] = float(np.mean(values))
    return seen[rid]


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(8, 18))
        a = int(rng.integers(0, len(frame) - n + 1))
        wind = frame["wind"].to_numpy(dtype=float)[a:a + n]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        mean = window_mean(rid, wind)
        try:
            key, wrong = numeric_options(mean, spread=0.4, decimals=1, unit="m/s", low=0)
        except ValueError:
            continue
        items.append(mc_item(
            f"Mean daily wind speed in Seattle (m/s), {dates[0]} to {dates[-1]}. What is the average over these "
            f"{n} days?",
            key, wrong,
            series=[series(wind, name="wind", timestamps=dates, unit="m/s")],
            rationale=f"Average of the {n} daily values: {mean:.2f} m/s.",
            metadata={"record_ids": [rid]},
        ))
    return items
