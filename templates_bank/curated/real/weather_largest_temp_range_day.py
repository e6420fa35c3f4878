"""Which day of a Seattle month had the largest daily temperature range."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        tmax = frame["temp_max"].to_numpy(dtype=float)
        tmin = frame["temp_min"].to_numpy(dtype=float)
        spread = tmax - tmin
        order = np.argsort(-spread, kind="stable")
        if spread[int(order[0])] - spread[int(order[1])] < 0.5:
            continue
        dates = list(frame.index.strftime("%Y-%m-%d"))
        key = int(order[0])
        wrong = [int(i) for i in order[1:4]]
        month = f"{MONTHS[frame.index[0].month - 1]} {frame.index[0].year}"
        items.append(mc_item(
            f"These are the daily maximum and minimum temperatures (deg C) in Seattle in {month}. On which day was the "
            "daily temperature range (maximum minus minimum) largest?",
            dates[key], [dates[i] for i in wrong],
            series=[series(tmax, name="temp_max", timestamps=dates, unit="deg C"),
                    series(tmin, name="temp_min", timestamps=dates, unit="deg C")],
            rationale=(f"On {dates[key]} the range is {tmax[key]:.1f} - {tmin[key]:.1f} = {spread[key]:.1f} deg C, the "
                       f"month's largest; the next largest ranges are "
                       + ", ".join(f"{spread[i]:.1f} deg C on {dates[i]}" for i in wrong) + "."),
            metadata={"record_ids": [rid], "range_c": round(float(spread[key]), 2)},
        ))
    return items
