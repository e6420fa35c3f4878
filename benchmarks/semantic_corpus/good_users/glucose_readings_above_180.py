"""How many CGM readings of a few hours were above 180 mg/dL.

Only stretches of consecutive readings 5 minutes apart are used. The wrong options are the counts of
other stretches of the same length (the key's own distribution); four equal counts are not asked."""


def stretches(frame, n):
    """Start positions of n consecutive readings, each 5 min after the one before."""
    gaps = np.diff(frame.index.to_numpy()).astype("timedelta64[s]").astype(int)
    ok = np.concatenate([[0], np.cumsum(gaps != 300)])
    return [s for s in range(len(frame) - n + 1) if ok[s + n - 1] == ok[s]]


def question(num_samples):
    rec = handler.records()
    days = rec.loc[rec["n_readings"] >= 200, "record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 60 * num_samples:
        tries += 1
        n = 12 * int(rng.integers(3, 9))  # 3 to 8 hours
        counts, shown = [], None
        for k in range(4):
            day = days[int(rng.integers(len(days)))]
            g = handler.series(day)["glucose_mgdl"]
            starts = stretches(g, n)
            if not starts:
                break
            s = starts[int(rng.integers(len(starts)))]
            part = g.iloc[s:s + n]
            counts.append(int((part > 180).sum()))
            if k == 0:
                shown = (day, part)
        if len(counts) < 4 or len(set(counts)) < 4:
            continue
        day, part = shown
        times = [t.strftime("%Y-%m-%d %H:%M") for t in part.index]
        items.append(mc_item(
            f"Sensor glucose (mg/dL) every 5 minutes from {times[0]} to {times[-1]} ({n} readings). How many of these "
            "readings were above 180 mg/dL?",
            str(counts[0]), [str(c) for c in counts[1:]],
            series=[series(part.to_numpy(), name="glucose_mgdl", timestamps=times, unit="mg/dL")],
            rationale=f"{counts[0]} of the {n} readings exceed 180 mg/dL.",
            metadata={"record_ids": [day]},
        ))
    return items
