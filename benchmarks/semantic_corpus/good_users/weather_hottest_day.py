"""On which day of a stretch of two to six weeks was Seattle's daily maximum temperature highest.

The wrong options are the days with the next-highest maxima; a stretch whose highest maximum is
reached on two days is skipped."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"])
    frame = pd.concat([handler.series(r) for r in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n = int(rng.integers(14, 43))
        start = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[start:start + n]
        tmax = part["temp_max"].to_numpy(dtype=float)
        days = list(part.index.strftime("%Y-%m-%d"))
        ranked = np.argsort(-tmax, kind="stable")
        if tmax[ranked[0]] == tmax[ranked[1]]:
            continue
        best = int(ranked[0])
        items.append(mc_item(
            f"Daily maximum temperature (°C) in Seattle from {days[0]} to {days[-1]}. On which day was it highest?",
            days[best], [days[int(i)] for i in ranked[1:4]],
            series=[series(tmax, name="temp_max", timestamps=days, unit="°C")],
            rationale=f"The highest maximum, {tmax[best]:.1f} °C, was on {days[best]}.",
            metadata={"record_ids": sorted({d[:7] for d in days})},
        ))
    return items
