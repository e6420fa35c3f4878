"""Average glucose of a few hours of CGM readings (mmol/L)."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["coverage"] >= 0.8]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        day = ids[int(rng.integers(len(ids)))]
        frame = handler.series(day)
        size = int(rng.integers(36, 97))
        if len(frame) < size:
            continue
        s = int(rng.integers(0, len(frame) - size + 1))
        part = frame.iloc[s:s + size]
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        mean = float(g.mean())
        key, wrong = numeric_options(mean, spread=max(5.0, float(g.std()) / 2), decimals=0, unit="mmol/L", low=40)
        stamps = list(part.index.strftime("%Y-%m-%d %H:%M"))
        items.append(mc_item(
            f"CGM readings (mmol/L) from {stamps[0]} to {stamps[-1]}. What is the mean glucose over this stretch?",
            key, wrong,
            series=[series(g, name="glucose", timestamps=stamps, unit="mmol/L")],
            rationale=f"The mean of the {size} readings is {mean:.1f} mmol/L.",
            metadata={"record_ids": [day]},
        ))
    return items
