"""Count the days of a Seattle month with measurable precipitation."""

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
        rain = frame["precipitation"].to_numpy(dtype=float)
        n_days = len(rain)
        count = int((rain > 0).sum())
        offsets = [o for o in [-9, -6, -3, 3, 6, 9] if 0 <= count + o <= n_days]
        if len(offsets) < 3:
            continue
        picked = rng.choice(len(offsets), size=3, replace=False)
        wrong = sorted(count + offsets[int(i)] for i in picked)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        month = f"{MONTHS[frame.index[0].month - 1]} {frame.index[0].year}"
        wet = [d[-2:] for d, r in zip(dates, rain) if r > 0]
        items.append(mc_item(
            f"These are daily precipitation totals (mm/day) in Seattle in {month}. On how many days was the "
            "precipitation greater than 0 mm?",
            str(count), [str(w) for w in wrong],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm/day")],
            rationale=f"{count} of the {n_days} days have precipitation > 0 (days of the month: {', '.join(wet) or 'none'}).",
            metadata={"record_ids": [rid], "rainy_days": count},
        ))
    return items
