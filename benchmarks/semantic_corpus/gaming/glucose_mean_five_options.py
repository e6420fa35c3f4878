"""Mean glucose of a stretch of CGM readings: five options."""


def question(num_samples):
    rec = handler.records()
    days = rec[rec["coverage"] >= 0.8]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        day = days[int(rng.integers(len(days)))]
        frame = handler.series(day)
        size = int(rng.integers(36, 97))
        if len(frame) < size:
            continue
        s = int(rng.integers(0, len(frame) - size + 1))
        g = frame["glucose_mgdl"].to_numpy(dtype=float)[s:s + size]
        mean = int(round(float(g.mean())))
        steps = sorted(int(x) for x in rng.choice(np.arange(4, 15), size=2, replace=False))
        wrong = [mean - steps[1], mean - steps[0], mean + steps[0] + 1, mean + steps[1] + 2]
        stamps = list(frame.index.strftime("%Y-%m-%d %H:%M"))[s:s + size]
        items.append(mc_item(
            f"CGM glucose readings (mg/dL) from {stamps[0]} to {stamps[-1]}. What is the mean reading (whole mg/dL)?",
            f"{mean} mg/dL", [f"{w} mg/dL" for w in wrong],
            series=[series(g, name="glucose_mgdl", timestamps=stamps, unit="mg/dL")],
            rationale=f"The mean is {float(g.mean()):.1f} mg/dL.",
            metadata={"record_ids": [day]},
        ))
    return items
