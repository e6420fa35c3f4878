"""At what time of a 2- to 6-hour stretch was the sensor glucose highest (clock times as options)."""


def question(num_samples):
    rec = handler.records()
    days = rec.loc[rec["n_readings"] >= 200, "record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        day = days[int(rng.integers(len(days)))]
        g = handler.series(day)["glucose_mgdl"]
        n = 12 * int(rng.integers(2, 7))
        if len(g) < n:
            continue
        s = int(rng.integers(0, len(g) - n + 1))
        part = g.iloc[s:s + n]
        steps = np.diff(part.index.to_numpy()).astype("timedelta64[m]").astype(int)
        if (steps != 5).any():
            continue  # a gap in the readings
        values = part.to_numpy(dtype=float)
        top = int(np.argmax(values))
        if np.count_nonzero(values == values[top]) > 1:
            continue
        clock = [t.strftime("%H:%M") for t in part.index]
        wrong = rng.choice([i for i in range(n) if abs(i - top) >= 3], size=3, replace=False)
        items.append(mc_item(
            f"Sensor glucose (mg/dL) on {day}, one reading every 5 minutes from {clock[0]} to {clock[-1]}. At what time "
            "was the reading highest?",
            clock[top], [clock[int(i)] for i in wrong],
            series=[series(values, name="glucose_mgdl", timestamps=[t.strftime("%Y-%m-%d %H:%M") for t in part.index],
                           unit="mg/dL")],
            rationale=f"The highest reading, {values[top]:.0f} mg/dL, is at {clock[top]}.",
            metadata={"record_ids": [day]},
        ))
    return items
