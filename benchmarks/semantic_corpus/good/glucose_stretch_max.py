"""Highest CGM reading of a 4 to 10 hour stretch of one day; the options are the highest readings
of four random stretches (at least 10 mg/dL apart), one of them shown."""


def stretch(days, frames):
    day = days[int(rng.integers(len(days)))]
    frame = frames[day]
    size = min(len(frame), int(rng.integers(48, 121)))
    s = int(rng.integers(0, len(frame) - size + 1))
    part = frame.iloc[s:s + size]
    return day, part, int(part["glucose_mgdl"].max())


def question(num_samples):
    rec = handler.records()
    days = rec[rec["coverage"] >= 0.8]["record_id"].tolist()
    frames = {d: handler.series(d) for d in days}
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        draws = [stretch(days, frames) for _ in range(4)]
        tops = sorted(d[2] for d in draws)
        if min(np.diff(tops)) < 10:
            continue
        day, part, top = draws[int(rng.integers(4))]
        g = part["glucose_mgdl"].to_numpy(dtype=float)
        stamps = list(part.index.strftime("%Y-%m-%d %H:%M"))
        items.append(mc_item(
            f"Continuous glucose monitor readings (mg/dL) from {stamps[0]} to {stamps[-1]}. What was the highest "
            "reading in this stretch?",
            f"{top} mg/dL", [f"{t} mg/dL" for t in tops if t != top],
            series=[series(g, name="glucose", timestamps=stamps, unit="mg/dL")],
            rationale=f"The largest of the {len(g)} readings is {top} mg/dL.",
            metadata={"record_ids": [day], "start": stamps[0]},
        ))
    return items
