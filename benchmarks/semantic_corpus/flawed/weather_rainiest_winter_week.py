"""Which of four winter weeks (the first 7 days of four November-February months) had the most
days with precipitation above 0 mm?"""

MONTHS = {11: "November", 12: "December", 1: "January", 2: "February"}


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["month"].isin(list(MONTHS))]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        picks = [ids[int(j)] for j in rng.choice(len(ids), size=4, replace=False)]
        weeks = [handler.series(r).iloc[:7] for r in picks]
        counts = [int((w["precipitation"] > 0).sum()) for w in weeks]
        names = [f"first week of {MONTHS[int(r[5:])]} {r[:4]}" for r in picks]
        best = names[int(np.argmax(counts))]
        items.append(mc_item(
            "Each series is Seattle's daily precipitation (mm) over the first 7 days of a winter month. Which "
            "week had the most days with precipitation above 0 mm?",
            best, [n for n in names if n != best],
            series=[series(w["precipitation"].to_numpy(dtype=float), name=n,
                           timestamps=list(w.index.strftime("%Y-%m-%d")), unit="mm")
                    for n, w in zip(names, weeks)],
            rationale="Rainy days: " + ", ".join(f"{n}: {c}" for n, c in zip(names, counts)) + ".",
            metadata={"record_ids": picks},
        ))
    return items
