"""Which was the warmest day (highest daily maximum) of a named month?"""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


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
        dates = list(frame.index.strftime("%Y-%m-%d"))
        wrong = [dates[int(j)] for j in rng.permutation(len(dates)) if int(j) != best][:3]
        name = f"{MONTHS[int(rid[5:]) - 1]} {rid[:4]}"
        items.append(mc_item(
            f"Daily maximum temperature in Seattle in {name} (°C). Which was the warmest day of {name}?",
            dates[best], wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"{dates[best]} reached {tmax[best]:.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
