"""In which 3-hour window of a day did sensor glucose peak."""

BINS = ["00:00-03:00", "03:00-06:00", "06:00-09:00", "09:00-12:00", "12:00-15:00", "15:00-18:00",
        "18:00-21:00", "21:00-24:00"]


def question(num_samples):
    rec = handler.records()
    days = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        day = str(days[int(rng.integers(len(days)))])
        frame = handler.series(day)
        g = frame["glucose_mgdl"].to_numpy(dtype=float)
        hours = frame.index.hour.to_numpy() + frame.index.minute.to_numpy() / 60.0
        which = (hours // 3).astype(int)
        peak = float(g.max())
        near = which[g >= peak - 5]
        if len(set(near.tolist())) != 1:
            continue
        key = int(near[0])
        top_hour = float(hours[int(np.argmax(g))])
        if min(abs(top_hour - 3 * b) for b in range(9)) < 10 / 60:
            continue
        rest = g[which != key]
        if len(rest) == 0 or rest.max() > peak - 15:
            continue
        bin_max = {}
        for b in range(8):
            vals = g[which == b]
            bin_max[b] = float(vals.max()) if len(vals) else -1.0
        others = sorted([b for b in range(8) if b != key], key=lambda b: -bin_max[b])
        wrong = [BINS[b] for b in others[:3]]
        stamp = frame.index[int(np.argmax(g))]
        when = f"{stamp.hour:02d}:{stamp.minute:02d}"
        items.append(mc_item(
            f"These are continuous glucose monitor readings (mg/dL, every 5 minutes) of one person on {day}. "
            "In which 3-hour window of the day did glucose reach its highest value?",
            BINS[key], wrong,
            series=[series(g, name=f"glucose {day}", timestamps=list(frame.index.strftime("%Y-%m-%d %H:%M")),
                           unit="mg/dL")],
            rationale=(f"The day's maximum is {peak:.0f} mg/dL at {when} (window {BINS[key]}); every reading within "
                       f"5 mg/dL of it lies in that window, and the highest reading outside it is {rest.max():.0f} mg/dL."),
            metadata={"record_ids": [day], "peak_mgdl": peak, "peak_time": when},
        ))
    return items
