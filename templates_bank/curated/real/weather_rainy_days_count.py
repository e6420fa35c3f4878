"""Count the days of a stretch of Seattle weather with measurable precipitation.

A stretch is 20 to 40 consecutive days starting on any day of 2012-2015 (about 30,000 stretches).
The options are the counts of four random stretches, all different, one of them (drawn
uniformly) shown: the distractors follow the key's own distribution."""


def draw(frame):
    """A random stretch of 20 to 40 consecutive days: (stretch, rainy-day count)."""
    size = int(rng.integers(20, 41))
    start = int(rng.integers(0, len(frame) - size + 1))
    part = frame.iloc[start:start + size]
    return part, int((part["precipitation"].to_numpy(dtype=float) > 0).sum())


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    frame = pd.concat([handler.series(rid) for rid in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        # four random stretches with four different counts; the one shown is drawn uniformly,
        # so the distractors follow the key's own distribution
        quad = [draw(frame) for _ in range(4)]
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
                       "other options are the counts of other random stretches of 20-40 days."),
            metadata={"record_ids": sorted({d[:7] for d in dates}), "start": dates[0], "n_days": len(rain),
                      "rainy_days": count},
        ))
    return items
