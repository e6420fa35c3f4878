"""Which calendar month are 14 to 21 unlabelled consecutive days of Seattle daily temperatures (domain
knowledge of the climate); the stretch starts on any day that keeps it inside one month."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def question(num_samples):
    rec = handler.records()
    month_of = rec["month"].to_numpy(dtype=int)
    mean_of = rec["mean_temp_max_c"].to_numpy(dtype=float)
    clim = {m: float(np.mean(mean_of[month_of == m])) for m in range(1, 13)}
    ids = rec["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        month = int(frame.index[0].month)
        size = int(rng.integers(14, 22))
        offset = int(rng.integers(0, len(frame) - size + 1))
        tmax = frame["temp_max"].to_numpy(dtype=float)[offset:offset + size]
        tmin = frame["temp_min"].to_numpy(dtype=float)[offset:offset + size]
        mean_max = float(np.mean(tmax))
        # distractors: months whose 2012-2015 average of the mean daily maximum is at least 4.5 deg C away
        far = [m for m in range(1, 13) if abs(float(clim[m]) - mean_max) >= 4.5]
        if abs(float(clim[month]) - mean_max) > 2.5 or len(far) < 3:
            continue
        wrong = [MONTHS[int(m) - 1] for m in rng.choice(far, size=3, replace=False)]
        items.append(mc_item(
            f"These are the daily maximum and minimum temperatures (deg C) in Seattle on {size} consecutive days, "
            f"all within one calendar month of {frame.index[0].year}, with the dates hidden. Which month is it?",
            MONTHS[month - 1], wrong,
            series=[series(tmax, name="temp_max", unit="deg C"), series(tmin, name="temp_min", unit="deg C")],
            context="Seattle has a temperate oceanic climate: mild wet winters and warm dry summers.",
            rationale=(f"The record is {rid}, days {offset + 1}-{offset + size}; their mean daily maximum is {mean_max:.1f} deg C, close to the 2012-2015 "
                       f"average for {MONTHS[month - 1]} ({float(clim[month]):.1f} deg C). The distractor months average "
                       + ", ".join(f"{MONTHS[m - 1]} {float(clim[m]):.1f}" for m in range(1, 13) if MONTHS[m - 1] in wrong)
                       + " deg C, each at least 4.5 deg C away."),
            metadata={"record_ids": [rid], "first_day": offset + 1, "n_days": size, "mean_temp_max_c": round(mean_max, 2), "month": month},
        ))
    return items
