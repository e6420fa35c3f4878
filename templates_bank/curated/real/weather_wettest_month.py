"""Which of several Seattle months had the most total precipitation."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        k = int(rng.integers(3, 5))
        picked = sorted(str(r) for r in rng.choice(ids, size=k, replace=False))
        frames = [handler.series(r) for r in picked]
        totals = [float(f["precipitation"].sum()) for f in frames]
        order = np.argsort(totals)[::-1]
        top, second = totals[int(order[0])], totals[int(order[1])]
        if top - second < max(10.0, 0.15 * top):
            continue
        names = [f"{MONTHS[f.index[0].month - 1]} {f.index[0].year}" for f in frames]
        correct = names[int(order[0])]
        items.append(mc_item(
            f"These are daily precipitation totals (mm/day) in Seattle for {k} months. Which month had the largest "
            "total precipitation?",
            correct, [m for m in names if m != correct],
            series=[series(f["precipitation"].to_numpy(dtype=float), name=m,
                           timestamps=list(f.index.strftime("%Y-%m-%d")), unit="mm/day")
                    for m, f in zip(names, frames)],
            rationale="Monthly totals: " + ", ".join(f"{m} {t:.1f} mm" for m, t in zip(names, totals))
                      + f"; the largest is {correct}.",
            metadata={"record_ids": picked, "total_precip_mm": {r: round(t, 1) for r, t in zip(picked, totals)}},
        ))
    return items
