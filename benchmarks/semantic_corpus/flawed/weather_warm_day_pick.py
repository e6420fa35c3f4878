"""Pick a day of the stretch on which the maximum temperature was above a threshold."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        tmax = frame["temp_max"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        cut = float(np.round(np.quantile(tmax, 0.6)))
        above = [i for i in range(len(tmax)) if tmax[i] > cut]
        if not above:
            continue
        hot = above[int(rng.integers(len(above)))]
        rest = [i for i in range(len(tmax)) if i != hot]
        picks = [rest[int(j)] for j in rng.choice(len(rest), size=3, replace=False)]
        items.append(mc_item(
            f"Daily maximum temperature in Seattle for {rid} (°C). On which of these dates was the maximum "
            f"above {cut:.0f} °C?",
            dates[hot], [dates[i] for i in picks],
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"On {dates[hot]} the maximum was {tmax[hot]:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
