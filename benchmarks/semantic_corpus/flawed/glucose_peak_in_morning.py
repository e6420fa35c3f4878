"""Highest glucose reading during a morning of CGM data."""


def question(num_samples):
    rec = handler.records()
    rec = rec[rec["coverage"] >= 0.9]
    ids = rec["record_id"].tolist()
    peaks = dict(zip(rec["record_id"], rec["max_mgdl"]))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        day = ids[int(rng.integers(len(ids)))]
        frame = handler.series(day)
        start_hour = int(rng.integers(5, 9))
        part = frame.between_time(f"{start_hour:02d}:00", f"{start_hour + 4:02d}:00")
        if len(part) < 30:
            continue
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        top = int(peaks[day])
        try:
            key, wrong = numeric_options(top, spread=15, decimals=0, unit="mg/dL", low=40, high=400)
        except ValueError:
            continue
        stamps = list(part.index.strftime("%Y-%m-%d %H:%M"))
        items.append(mc_item(
            f"CGM glucose readings (mg/dL) on {day} between {start_hour:02d}:00 and {start_hour + 4:02d}:00. "
            "What was the highest reading?",
            key, wrong,
            series=[series(g, name="glucose_mgdl", timestamps=stamps, unit="mg/dL")],
            rationale=f"The maximum reading is {top} mg/dL.",
            metadata={"record_ids": [day]},
        ))
    return items
