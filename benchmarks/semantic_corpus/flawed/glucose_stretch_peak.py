"""Highest CGM reading in a 3-8 hour stretch of one of the last 30 well-covered days."""


def question(num_samples):
    rec = handler.records().sort_values("record_id")
    days = rec[rec["coverage"] >= 0.85]["record_id"].tolist()[-30:]
    items = []
    peaks = {}
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
        peak = max(peaks.get(day, 0.0), float(g.max()))
        peaks[day] = peak
        try:
            key, wrong = numeric_options(int(peak), spread=12, decimals=0, unit="mg/dL", low=40, high=400)
        except ValueError:
            continue
        stamps = list(frame.index.strftime("%Y-%m-%d %H:%M"))[s:s + size]
        items.append(mc_item(
            f"CGM glucose (mg/dL) from {stamps[0]} to {stamps[-1]}. What was the highest reading in this stretch?",
            key, wrong,
            series=[series(g, name="glucose_mgdl", timestamps=stamps, unit="mg/dL")],
            rationale=f"The highest reading is {int(peak)} mg/dL.",
            metadata={"record_ids": [day]},
        ))
    return items
