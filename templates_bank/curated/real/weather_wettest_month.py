"""Which of four stretches of Seattle weather, the same calendar days of 2012-2015, had the most
precipitation.

A stretch is 15 to 20 consecutive days starting on a random calendar day; the four stretches are
those days in each of the four years, labelled A-D in random order (the series keep their dates).
Sharing their calendar days, no climate prior ("November is wetter than September") picks the
key, and the letters hide the year (2013 was dry). Four consecutive blocks of one stretch, with
date ranges as options, let that prior pick the key: a stretch spanning two months gets wetter
or drier along the way."""

LETTERS = "ABCD"


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(rid) for rid in ids])
    years = sorted(set(whole.index.year))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        block, day_of_year = int(rng.integers(15, 21)), int(rng.integers(0, 365 - 20))
        first = pd.Timestamp(year=2013, month=1, day=1) + pd.Timedelta(days=day_of_year)  # not a leap year
        starts = [first.replace(year=y) for y in years]
        parts = [whole.loc[s:s + pd.Timedelta(days=block - 1)] for s in starts]
        days = {tuple(p.index.strftime("%m-%d")) for p in parts}
        if len(parts) != 4 or any(len(p) != block for p in parts) or len(days) != 1:  # Feb 29 in 2012
            continue
        parts = [parts[int(i)] for i in rng.permutation(4)]
        totals = [float(p["precipitation"].sum()) for p in parts]
        order = np.argsort(totals)[::-1]
        top, second = totals[int(order[0])], totals[int(order[1])]
        if top - second < max(5.0, 0.15 * top):
            continue
        names = [f"stretch {letter}" for letter in LETTERS]
        dates = [list(p.index.strftime("%Y-%m-%d")) for p in parts]
        correct = names[int(order[0])]
        items.append(mc_item(
            f"These are four stretches of daily precipitation totals (mm/day) in Seattle: the same {block} calendar "
            f"days ({dates[0][0][5:]} to {dates[0][-1][5:]}) in four different years, labelled A to D. Which stretch "
            "had the largest total precipitation?",
            correct, [m for m in names if m != correct],
            series=[series(p["precipitation"].to_numpy(dtype=float), name=m, timestamps=d, unit="mm/day")
                    for p, m, d in zip(parts, names, dates)],
            rationale="Stretch totals: " + ", ".join(f"{m} ({d[0][:4]}): {t:.1f} mm"
                                                     for m, d, t in zip(names, dates, totals))
                      + f"; the largest is {correct}.",
            metadata={"record_ids": sorted({day[:7] for d in dates for day in d}), "starts": [d[0] for d in dates],
                      "block_days": block, "totals_mm": [round(t, 1) for t in totals]},
        ))
    return items
