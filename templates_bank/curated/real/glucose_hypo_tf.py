"""True/false: did glucose go below 70 mg/dL (hypoglycaemia) during a stretch of CGM readings.

A stretch is 6 to 24 hours of consecutive readings of a well-covered day. Its length and its
start (as a share of the day) are drawn first, and kept only when some days are clearly true
there (lowest reading <= 64 mg/dL) and some clearly false (>= 76); then the truth is drawn 50/50
and a day of that side. So neither the stretch's length nor its time of day says the truth
(drawing the truth first and then any stretch made long stretches true more often)."""


def question(num_samples):
    rec = handler.records()
    rec = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]
    frames = [(str(d), handler.series(d)) for d in rec["record_id"].tolist()]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        size = int(rng.integers(72, 289))
        share = float(rng.uniform())
        sides = {True: [], False: []}
        for day, frame in frames:
            if len(frame) < size:
                continue
            start = int(round(share * (len(frame) - size)))
            lowest = float(frame["glucose_mgdl"].to_numpy(dtype=float)[start:start + size].min())
            if lowest <= 64 or lowest >= 76:
                sides[lowest <= 64].append((day, frame, start))
        if not (sides[True] and sides[False]):
            continue
        is_true = bool(rng.integers(2))
        day, frame, start = sides[is_true][int(rng.integers(len(sides[is_true])))]
        part = frame.iloc[start:start + size]
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        lowest = float(g.min())
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
    return items
