"""What share of a stretch of CGM readings lie in the 70-180 mg/dL target range.

A stretch is 8 to 24 hours of consecutive readings of one well-covered day (any start), so the
pool holds thousands of stretches. The options are the in-range shares (whole %) of four random
stretches of one length from one day, at least 8 points apart, one of them (drawn uniformly)
shown: the distractors follow the key's own distribution, so neither its rank nor a typical value
gives it away, and remembering a day's share from other items does not either (with distractors
from other days, the shown day's remembered share picked the key)."""


def shares(ok, size):
    """The in-range share (%) of every stretch of `size` readings, by start."""
    inside = np.concatenate([[0], np.cumsum(ok)])
    return 100.0 * (inside[size:] - inside[:-size]) / size


def question(num_samples):
    rec = handler.records()
    rec = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]
    frames = []
    for day in rec["record_id"].tolist():
        frame = handler.series(day)
        g = frame["glucose_mgdl"].to_numpy(dtype=float)
        frames.append((str(day), frame, (g >= 70) & (g <= 180)))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        day, frame, ok = frames[int(rng.integers(len(frames)))]
        size = min(len(frame), int(rng.integers(96, 289)))
        pct_by_start = shares(ok, size)
        # starts whose share is clearly on one whole percent; four of them drawn alike
        usable = np.flatnonzero(np.abs(pct_by_start - np.round(pct_by_start)) <= 0.4)
        if len(usable) < 4 or np.ptp(pct_by_start[usable]) < 24:
            continue
        # four starts drawn alike, again until their shares are 8 points apart (most draws are not)
        for _ in range(20):
            starts = [int(usable[int(rng.integers(len(usable)))]) for _ in range(4)]
            values = sorted(int(round(pct_by_start[i])) for i in starts)
            if min(np.diff(values)) >= 8:
                break
        else:
            continue
        start = starts[int(rng.integers(4))]
        part, pct = frame.iloc[start:start + size], float(pct_by_start[start])
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        correct = int(round(pct))
        stamps = list(part.index.strftime("%Y-%m-%d %H:%M"))
        inside = int(((g >= 70) & (g <= 180)).sum())
        items.append(mc_item(
            f"These are {len(g)} consecutive continuous glucose monitor readings (mg/dL, every 5 minutes) of one "
            f"person, {stamps[0]} to {stamps[-1]}. About what percentage of these readings lie in the target range "
            "70-180 mg/dL (inclusive)?",
            f"{correct}%", [f"{v}%" for v in values if v != correct],
            series=[series(g, name=f"glucose {day}", timestamps=stamps, unit="mg/dL")],
            rationale=(f"{inside} of {len(g)} readings are within 70-180 mg/dL: {pct:.1f}%, rounded to {correct}%; "
                       f"{int((g < 70).sum())} readings are below 70 and {int((g > 180).sum())} above 180. The other "
                       "options are the shares of other random stretches of that length and day, at least 8 points away."),
            metadata={"record_ids": [day], "start": stamps[0], "n_readings": len(g), "tir_pct": round(pct, 2)},
        ))
    return items
