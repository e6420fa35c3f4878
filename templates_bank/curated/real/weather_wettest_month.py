"""Which of four consecutive blocks of a Seattle weather stretch had the most precipitation.

A stretch is 60 to 80 consecutive days starting on any day of 2012-2015, split into four equal
blocks (the options, as date ranges). The blocks share a season, so no climate prior ("November
is wettest") picks the key, and the date ranges rarely repeat across items."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(rid) for rid in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        block = int(rng.integers(15, 21))
        start = int(rng.integers(0, len(whole) - 4 * block + 1))
        frame = whole.iloc[start:start + 4 * block]
        rain = frame["precipitation"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        totals = [float(rain[k * block:(k + 1) * block].sum()) for k in range(4)]
        names = [f"{dates[k * block]} to {dates[(k + 1) * block - 1]}" for k in range(4)]
        order = np.argsort(totals)[::-1]
        top, second = totals[int(order[0])], totals[int(order[1])]
        if top - second < max(5.0, 0.15 * top):
            continue
        correct = names[int(order[0])]
        items.append(mc_item(
            f"These are daily precipitation totals (mm/day) in Seattle from {dates[0]} to {dates[-1]}. Which of these "
            f"four {block}-day periods had the largest total precipitation?",
            correct, [m for m in names if m != correct],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm/day")],
            rationale="Period totals: " + ", ".join(f"{m}: {t:.1f} mm" for m, t in zip(names, totals))
                      + f"; the largest is {correct}.",
            metadata={"record_ids": sorted({d[:7] for d in dates}), "start": dates[0], "block_days": block,
                      "totals_mm": [round(t, 1) for t in totals]},
        ))
    return items
