"""Count the windy days (mean wind above a threshold) in a stretch of one month."""


def question(num_samples):
    recs = handler.records()
    ids = recs["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        f = handler.series(rid)
        wind = f["wind"].to_numpy(dtype=float)
        days = list(f.index.strftime("%Y-%m-%d"))
        threshold = float(rng.choice([3.0, 3.5, 4.0, 4.5]))
        length = int(rng.integers(12, 20))
        a = int(rng.integers(1, len(wind) - length + 1))
        count = int((wind[a - 1:a - 1 + length] > threshold).sum())
        try:
            key, wrong = numeric_options(count, spread=2, decimals=0, low=0, high=length)
        except ValueError:
            continue
        items.append(mc_item(
            f"Mean daily wind speed in Seattle (m/s), {days[a]} to {days[a + length - 1]}. On how many of these "
            f"days was it above {threshold:.1f} m/s?",
            key, wrong,
            series=[series(wind[a:a + length], name="wind", timestamps=days[a:a + length], unit="m/s")],
            rationale=f"{count} days exceed {threshold:.1f} m/s.",
            metadata={"record_ids": [rid], "threshold": threshold},
        ))
    return items
