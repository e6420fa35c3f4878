"""Which calendar month are 14 to 21 unlabelled consecutive days of Seattle daily temperatures (domain
knowledge of the climate).

The four months offered are drawn first, among the sets in which each month can be the answer; the key is
then one of the four at random and the stretch comes from that month. So every month is the key in a
quarter of the items that show it, whatever its name's length or its season (drawing the distractors
after the key made mid-season months keys far more often than distractors, a cue that needs no data)."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
NEAR = 2.5  # the stretch's mean daily maximum is this close to its month's 2012-2015 average (deg C)
FAR = 4.5  # and at least this far from every distractor month's average
MIN_STRETCHES = 30  # a set of months is offered only when each of them has this many stretches to draw from


def month_windows(rec):
    """Per month: every stretch of 14-21 days inside one of its records, as (record, offset, size, mean max)."""
    windows = {m: [] for m in range(1, 13)}
    for rid in rec["record_id"].tolist():
        frame = handler.series(str(rid))
        sums = np.concatenate([[0.0], np.cumsum(frame["temp_max"].to_numpy(dtype=float))])
        for size in range(14, 22):
            means = (sums[size:] - sums[:-size]) / size
            windows[int(frame.index[0].month)] += [(str(rid), offset, size, float(mean))
                                                   for offset, mean in enumerate(means.tolist())]
    return windows


def question(num_samples):
    rec = handler.records()
    month_of = rec["month"].to_numpy(dtype=int)
    mean_of = rec["mean_temp_max_c"].to_numpy(dtype=float)
    clim = np.array([float(np.mean(mean_of[month_of == m])) for m in range(1, 13)])
    windows = month_windows(rec)
    means = {m: np.array([w[3] for w in windows[m]]) for m in range(1, 13)}

    def eligible(key, months):
        others = [m for m in months if m != key]
        ok = np.abs(means[key] - clim[key - 1]) <= NEAR
        for m in others:
            ok = ok & (np.abs(means[key] - clim[m - 1]) >= FAR)
        return np.flatnonzero(ok)

    sets = []
    for a in range(1, 13):
        for b in range(a + 1, 13):
            for c in range(b + 1, 13):
                for d in range(c + 1, 13):
                    months = (a, b, c, d)
                    apart = all(abs(clim[i - 1] - clim[j - 1]) >= FAR - NEAR for i in months for j in months if i < j)
                    if apart and all(len(eligible(k, months)) >= MIN_STRETCHES for k in months):
                        sets.append(months)
    items = []
    for _ in range(num_samples):
        months = sets[int(rng.integers(len(sets)))]
        month = months[int(rng.integers(4))]
        choices = eligible(month, months)
        rid, offset, size, mean_max = windows[month][int(choices[int(rng.integers(len(choices)))])]
        frame = handler.series(rid)
        tmax = frame["temp_max"].to_numpy(dtype=float)[offset:offset + size]
        tmin = frame["temp_min"].to_numpy(dtype=float)[offset:offset + size]
        wrong = [MONTHS[m - 1] for m in months if m != month]
        items.append(mc_item(
            f"These are the daily maximum and minimum temperatures (deg C) in Seattle on {size} consecutive days, "
            f"all within one calendar month of {frame.index[0].year}, with the dates hidden. Which month is it?",
            MONTHS[month - 1], wrong,
            series=[series(tmax, name="temp_max", unit="deg C"), series(tmin, name="temp_min", unit="deg C")],
            context="Seattle has a temperate oceanic climate: mild wet winters and warm dry summers.",
            rationale=(f"The record is {rid}, days {offset + 1}-{offset + size}; their mean daily maximum is {mean_max:.1f} deg C, close to the 2012-2015 "
                       f"average for {MONTHS[month - 1]} ({float(clim[month - 1]):.1f} deg C). The distractor months average "
                       + ", ".join(f"{MONTHS[m - 1]} {float(clim[m - 1]):.1f}" for m in months if m != month)
                       + f" deg C, each at least {FAR} deg C away from the stretch's mean."),
            metadata={"record_ids": [rid], "first_day": offset + 1, "n_days": size, "mean_temp_max_c": round(mean_max, 2), "month": month},
        ))
    return items
