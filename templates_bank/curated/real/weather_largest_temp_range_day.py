"""Which day of a stretch of Seattle weather had the largest (or smallest) daily temperature range.

A stretch is 12 to 24 consecutive days starting on any day of 2012-2015, so items rarely share a
stretch; the distractors are the stretch's next three largest-range (smallest-range) days, the
near misses; largest and smallest are asked equally often.
Options name days by their position in the stretch ("day 12"): a calendar date would let a
solver memorize the few days of 2012-2015 with record ranges, keyed in every stretch that holds them."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(rid) for rid in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        size = int(rng.integers(12, 25))
        # largest or smallest, 50/50: the seasonal drift of the range (growing in spring, shrinking in
        # autumn) would otherwise put the key late (or early) among the options more often than not
        smallest = bool(rng.integers(2))
        word = "smallest" if smallest else "largest"
        start = int(rng.integers(0, len(whole) - size + 1))
        frame = whole.iloc[start:start + size]
        tmax = frame["temp_max"].to_numpy(dtype=float)
        tmin = frame["temp_min"].to_numpy(dtype=float)
        spread = tmax - tmin
        order = np.argsort(spread if smallest else -spread, kind="stable")
        if abs(spread[int(order[0])] - spread[int(order[1])]) < 0.5:
            continue
        dates = list(frame.index.strftime("%Y-%m-%d"))
        key = int(order[0])
        wrong = [int(i) for i in order[1:4]]
        items.append(mc_item(
            f"These are the daily maximum and minimum temperatures (deg C) in Seattle from {dates[0]} to {dates[-1]}. "
            "Counting the first day as day 1, on which day was the "
            f"daily temperature range (maximum minus minimum) {word}?",
            f"day {key + 1}", [f"day {i + 1}" for i in wrong],
            series=[series(tmax, name="temp_max", timestamps=dates, unit="deg C"),
                    series(tmin, name="temp_min", timestamps=dates, unit="deg C")],
            rationale=(f"On day {key + 1} ({dates[key]}) the range is {tmax[key]:.1f} - {tmin[key]:.1f} = {spread[key]:.1f} deg C, the "
                       f"stretch's {word}; the next {word} ranges are "
                       + ", ".join(f"{spread[i]:.1f} deg C on {dates[i]}" for i in wrong) + "."),
            metadata={"record_ids": sorted({d[:7] for d in dates}), "start": dates[0], "extreme": word, "range_c": round(float(spread[key]), 2)},
        ))
    return items
