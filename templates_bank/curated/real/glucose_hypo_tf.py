"""True/false: did glucose go below 70 mg/dL (hypoglycaemia) during a stretch of CGM readings.

A stretch is 6 to 24 hours of consecutive readings of a well-covered day (any start). The truth
is drawn first (50/50), then stretches until one whose lowest reading is clearly on that side
(<= 64 mg/dL for true, >= 76 for false)."""


def question(num_samples):
    rec = handler.records()
    rec = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]
    frames = [(str(d), handler.series(d)) for d in rec["record_id"].tolist()]
    items = []
    tries = 0
    is_true = bool(rng.integers(2))
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        day, frame = frames[int(rng.integers(len(frames)))]
        size = min(len(frame), int(rng.integers(72, 289)))
        start = int(rng.integers(0, len(frame) - size + 1))
        part = frame.iloc[start:start + size]
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        lowest = float(g.min())
        if not (lowest <= 64 if is_true else lowest >= 76):
            continue
        stamps = list(part.index.strftime("%Y-%m-%d %H:%M"))
        stamp = part.index[int(np.argmin(g))]
        when = f"{stamp.hour:02d}:{stamp.minute:02d}"
        n_below = int((g < 70).sum())
        items.append(tf_item(
            f"These are continuous glucose monitor readings (mg/dL, every 5 minutes) of one person, {stamps[0]} to "
            f"{stamps[-1]}. True or false: glucose fell below 70 mg/dL (the hypoglycaemia threshold) at least once "
            "in this stretch.",
            lowest < 70,
            series=[series(g, name=f"glucose {day}", timestamps=stamps, unit="mg/dL")],
            rationale=f"The stretch's lowest reading is {lowest:.0f} mg/dL at {when}; {n_below} readings are below 70 mg/dL.",
            metadata={"record_ids": [day], "start": stamps[0], "n_readings": len(g), "min_mgdl": lowest},
        ))
        is_true = bool(rng.integers(2))
    return items
