"""At which hour does an ItalyPowerDemand day reach its peak demand."""


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    profiles = [handler.series(r)["demand"].to_numpy(dtype=float) for r in ids]
    peaks = []  # (record index, peak hour) of days whose maximum is clear (0.08 above the next hour)
    for i, demand in enumerate(profiles):
        order = np.argsort(-demand, kind="stable")
        if demand[int(order[0])] - demand[int(order[1])] >= 0.08:
            peaks.append((i, int(order[0])))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        # four clear days whose peak hours lie at least 2 h apart; the one shown is drawn uniformly,
        # so the distractor hours are other days' peak hours (the key's own distribution: mostly
        # late morning and evening), and knowing when Italy usually peaks does not pick the key
        quad = [peaks[int(k)] for k in rng.choice(len(peaks), size=4, replace=False)]
        hours = sorted(h for _, h in quad)
        if min(np.diff(hours)) < 2:
            continue
        i, top = quad[int(rng.integers(4))]
        demand, rid = profiles[i], str(ids[i])
        wrong = [h for h in hours if h != top]
        second = int(np.argsort(-demand, kind="stable")[1])
        items.append(mc_item(
            "This is one day of Italian electricity demand, one value per hour (hour 0 to 23), z-normalised so only "
            "the daily shape is kept. At which hour is demand highest?",
            f"hour {top}", [f"hour {h}" for h in wrong],
            series=[series(demand, name="demand", timestamps=[str(h) for h in range(24)], unit="z-score")],
            rationale=(f"The maximum is {demand[top]:.3f} at hour {top}; the next highest hour is {second} with "
                       f"{demand[second]:.3f}. The distractor hours are the peak hours of other days; this day has "
                       + ", ".join(f"{demand[h]:.3f} (hour {h})" for h in wrong) + " there."),
            metadata={"record_ids": [rid], "peak_hour": top},
        ))
    return items
