"""On which day did the daily maximum temperature rise the most compared with the day before?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        values = frame["temp_max"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        d = np.diff(values)
        ranked = np.argsort(-d)
        if d[ranked[0]] - d[ranked[1]] < 0.5:
            continue
        i = int(ranked[0])
        others = [dates[int(j)] for j in ranked[1:4]]
        items.append(mc_item(
            f"Daily maximum temperature in Seattle for {rid} (°C). On which date was the rise from the previous "
            "day largest?",
            dates[i], others,
            series=[series(values, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The largest day-to-day rise is {d[i]:.1f} °C, on {dates[i]}.",
            metadata={"record_ids": [rid]},
        ))
    return items
