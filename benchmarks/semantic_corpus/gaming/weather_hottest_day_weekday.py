"""On which date of a stretch was the daily maximum temperature highest? (The question gives the weekday.)"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        tmax = frame["temp_max"].to_numpy(dtype=float)
        order = np.argsort(-tmax)
        if tmax[order[0]] - tmax[order[1]] < 0.5:
            continue
        best = int(order[0])
        days = frame.index
        weekday = days[best].strftime("%A")
        others = [int(j) for j in rng.permutation(len(days)) if days[int(j)].strftime("%A") != weekday]
        picked = []
        for j in others:
            if days[j].strftime("%A") not in {days[p].strftime("%A") for p in picked}:
                picked.append(j)
            if len(picked) == 3:
                break
        dates = list(days.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily maximum temperature in Seattle for {rid} (°C). The warmest day of the month was a {weekday}. "
            "On which date was the daily maximum highest?",
            dates[best], [dates[j] for j in picked],
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"{dates[best]} ({weekday}) reached {tmax[best]:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
