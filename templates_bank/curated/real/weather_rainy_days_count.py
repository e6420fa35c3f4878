"""Count the days of a stretch of Seattle weather with measurable precipitation.

A stretch is 20 to 40 consecutive days of 2012-2015. The options are the counts of four random
stretches of the same length starting within 15 days of the same calendar day (in any year), all
different, one of them (drawn uniformly) shown: the distractors follow the key's own distribution,
also given the shown length and season (distractors from stretches of other lengths and seasons
let the shown length and a climate prior pick the key)."""


def draw(frame, size, day_of_year):
    """A stretch of `size` days starting within 15 days of `day_of_year` in a random year:
    (stretch, rainy-day count), or None when it would run off the data."""
    year = int(rng.choice(sorted(set(frame.index.year))))
    start_date = pd.Timestamp(year=year, month=1, day=1) + pd.Timedelta(days=day_of_year + int(rng.integers(-15, 16)))
    start = int(frame.index.searchsorted(start_date))
    if start + size > len(frame) or frame.index[start] != start_date:
        return None
    part = frame.iloc[start:start + size]
    return part, int((part["precipitation"].to_numpy(dtype=float) > 0).sum())


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    frame = pd.concat([handler.series(rid) for rid in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        # four random stretches of one length and season with four different counts; the one
        # shown is drawn uniformly, so the distractors follow the key's own distribution
        size, day_of_year = int(rng.integers(20, 41)), int(rng.integers(0, 365))
        quad = [draw(frame, size, day_of_year) for _ in range(4)]
        if any(q is None for q in quad):
            continue
        counts = sorted(q[1] for q in quad)
        if len(set(counts)) < 4:
            continue
        part, count = quad[int(rng.integers(4))]
        rain = part["precipitation"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        wet = [d for d, r in zip(dates, rain) if r > 0]
        items.append(mc_item(
            f"These are daily precipitation totals (mm/day) in Seattle from {dates[0]} to {dates[-1]}. On how many "
            "of these days was the precipitation greater than 0 mm?",
            str(count), [str(c) for c in counts if c != count],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm/day")],
            rationale=(f"{count} of the {len(rain)} days have precipitation > 0 ({', '.join(wet) or 'none'}). The "
                       "other options are the counts of other random stretches of the same length and season."),
            metadata={"record_ids": sorted({d[:7] for d in dates}), "start": dates[0], "n_days": len(rain),
                      "rainy_days": count},
        ))
    return items
