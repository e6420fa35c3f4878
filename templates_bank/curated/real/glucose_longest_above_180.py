"""Which of four stretches of CGM readings spent the longest time above 180 mg/dL.

Each stretch is 8 to 24 hours of consecutive readings of a well-covered day (any start), shown
under a neutral label S1..S4, so no date can be memorized as a high-glucose day."""


def question(num_samples):
    rec = handler.records()
    days = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288)]["record_id"].tolist()
    frames = [(str(d), handler.series(d)) for d in days]
    labels = ["S1", "S2", "S3", "S4"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        parts = []
        for _ in labels:
            day, frame = frames[int(rng.integers(len(frames)))]
            size = min(len(frame), int(rng.integers(96, 289)))
            start = int(rng.integers(0, len(frame) - size + 1))
            parts.append((day, frame.iloc[start:start + size]))
        counts = [int((part["glucose_mgdl"] > 180).sum()) for _, part in parts]
        order = np.argsort(counts)[::-1]
        top, second = counts[int(order[0])], counts[int(order[1])]
        if top < 12 or top - second < 6:
            continue
        correct = labels[int(order[0])]
        minutes = ", ".join(f"{lab}: {c} readings = {5 * c} min" for lab, c in zip(labels, counts))
        spans = "; ".join(f"{lab}: {part.index[0].strftime('%Y-%m-%d %H:%M')} to {part.index[-1].strftime('%H:%M')}"
                          for lab, (_, part) in zip(labels, parts))
        items.append(mc_item(
            "These are four stretches, S1 to S4, of continuous glucose monitor readings (mg/dL, one every 5 minutes) "
            "of one person. Counting each reading as 5 minutes, in which stretch did glucose spend the longest time "
            "above 180 mg/dL?",
            correct, [lab for lab in labels if lab != correct],
            series=[series(part["glucose_mgdl"].to_numpy(dtype=float), name=lab,
                           timestamps=list(part.index.strftime("%Y-%m-%d %H:%M")), unit="mg/dL")
                    for lab, (_, part) in zip(labels, parts)],
            context=f"Stretches shown: {spans}.",
            rationale=f"Readings above 180 mg/dL per stretch: {minutes}; the most is {correct}.",
            metadata={"record_ids": [day for day, _ in parts], "readings_above_180": dict(zip(labels, counts))},
        ))
    return items
