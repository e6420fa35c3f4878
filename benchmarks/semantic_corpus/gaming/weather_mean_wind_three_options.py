"""Mean wind speed of a stretch: three options."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 20))
        a = int(rng.integers(0, len(frame) - k + 1))
        wind = frame["wind"].to_numpy(dtype=float)[a:a + k]
        mean = float(wind.mean())
        gap = float(rng.uniform(0.4, 1.0))
        low, high = mean - gap * float(rng.uniform(0.7, 1.3)), mean + gap * float(rng.uniform(0.7, 1.3))
        if low <= 0:
            continue
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        items.append(mc_item(
            f"Mean daily wind speed in Seattle (m/s) from {dates[0]} to {dates[-1]}. What is the average over "
            "these days?",
            f"{mean:.1f} m/s", [f"{low:.1f} m/s", f"{high:.1f} m/s"],
            series=[series(wind, name="wind", timestamps=dates, unit="m/s")],
            rationale=f"The average is {mean:.2f} m/s.",
            metadata={"record_ids": [rid]},
        ))
    return items
