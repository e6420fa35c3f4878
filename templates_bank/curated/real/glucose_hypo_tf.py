"""True/false: did glucose go below 70 mg/dL (hypoglycaemia) on a given day."""


def question(num_samples):
    rec = handler.records()
    rec = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]
    low = rec[rec["min_mgdl"] <= 64]["record_id"].tolist()
    high = rec[rec["min_mgdl"] >= 76]["record_id"].tolist()
    items = []
    for _ in range(num_samples):
        is_true = bool(rng.integers(2))
        pool = low if is_true else high
        day = str(pool[int(rng.integers(len(pool)))])
        frame = handler.series(day)
        g = frame["glucose_mgdl"].to_numpy(dtype=float)
        lowest = float(g.min())
        stamp = frame.index[int(np.argmin(g))]
        when = f"{stamp.hour:02d}:{stamp.minute:02d}"
        n_below = int((g < 70).sum())
        items.append(tf_item(
            f"These are continuous glucose monitor readings (mg/dL, every 5 minutes) of one person on {day}. "
            "True or false: glucose fell below 70 mg/dL (the hypoglycaemia threshold) at least once that day.",
            lowest < 70,
            series=[series(g, name=f"glucose {day}", timestamps=list(frame.index.strftime("%Y-%m-%d %H:%M")),
                           unit="mg/dL")],
            rationale=f"The day's lowest reading is {lowest:.0f} mg/dL at {when}; {n_below} readings are below 70 mg/dL.",
            metadata={"record_ids": [day], "min_mgdl": lowest},
        ))
    return items
