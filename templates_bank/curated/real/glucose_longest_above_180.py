"""Which of several CGM days spent the longest time above 180 mg/dL."""


def question(num_samples):
    rec = handler.records()
    days = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        k = int(rng.integers(3, 5))
        picked = sorted(str(d) for d in rng.choice(days, size=k, replace=False))
        frames = [handler.series(d) for d in picked]
        counts = [int((f["glucose_mgdl"] > 180).sum()) for f in frames]
        order = np.argsort(counts)[::-1]
        top, second = counts[int(order[0])], counts[int(order[1])]
        if top < 12 or top - second < 6:
            continue
        correct = picked[int(order[0])]
        minutes = ", ".join(f"{d}: {c} readings = {5 * c} min" for d, c in zip(picked, counts))
        items.append(mc_item(
            f"These are continuous glucose monitor readings (mg/dL, one every 5 minutes) of one person on {k} days. "
            "Counting each reading as 5 minutes, on which day did glucose spend the longest time above 180 mg/dL?",
            correct, [d for d in picked if d != correct],
            series=[series(f["glucose_mgdl"].to_numpy(dtype=float), name=d,
                           timestamps=list(f.index.strftime("%Y-%m-%d %H:%M")), unit="mg/dL")
                    for d, f in zip(picked, frames)],
            rationale=f"Readings above 180 mg/dL per day: {minutes}; the most is {correct}.",
            metadata={"record_ids": picked, "readings_above_180": dict(zip(picked, counts))},
        ))
    return items
