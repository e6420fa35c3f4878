"""Mean of a few hours of CGM readings, to one decimal."""


def question(num_samples):
    rec = handler.records()
    days = rec[rec["coverage"] >= 0.8]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        day = days[int(rng.integers(len(days)))]
        frame = handler.series(day)
        size = int(rng.integers(24, 73))
        if len(frame) < size:
            continue
        s = int(rng.integers(0, len(frame) - size + 1))
        g = frame["glucose_mgdl"].to_numpy(dtype=float)[s:s + size]
        mean = round(float(g.mean()), 1)
        steps = rng.choice([-9, -7, -5, -3, 3, 5, 7, 9], size=3, replace=False)
        stamps = list(frame.index.strftime("%Y-%m-%d %H:%M"))[s:s + size]
        items.append(mc_item(
            f"CGM readings (mg/dL) from {stamps[0]} to {stamps[-1]}. What is their mean, to one decimal?",
            f"{mean:.1f} mg/dL", [f"{mean + 0.1 * int(d) * 7:.1f} mg/dL" for d in steps],
            series=[series(g, name="glucose_mgdl", timestamps=stamps, unit="mg/dL")],
            rationale=f"The mean of {size} readings is {mean:.1f} mg/dL.",
            metadata={"record_ids": [day]},
        ))
    return items
