"""What share of a day's CGM readings lie in the 70-180 mg/dL target range."""


def question(num_samples):
    rec = handler.records()
    rec = rec[(rec["coverage"] >= 0.9) & (rec["n_readings"] <= 288) & (rec["tir_pct"] <= 96)]
    days = rec["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        day = str(days[int(rng.integers(len(days)))])
        frame = handler.series(day)
        g = frame["glucose_mgdl"].to_numpy(dtype=float)
        inside = int(((g >= 70) & (g <= 180)).sum())
        pct = 100.0 * inside / len(g)
        correct = int(round(pct))
        chosen = [correct]
        wrong = []
        for cand in rng.permutation(np.arange(max(3, correct - 40), min(100, correct + 40) + 1)):
            cand = int(cand)
            if all(abs(cand - c) >= 12 for c in chosen):
                chosen.append(cand)
                wrong.append(cand)
            if len(wrong) == 3:
                break
        if len(wrong) < 3:
            continue
        items.append(mc_item(
            f"These are continuous glucose monitor readings (mg/dL, every 5 minutes) of one person on {day}. "
            "About what percentage of the day's readings lie in the target range 70-180 mg/dL (inclusive)?",
            f"{correct}%", [f"{w}%" for w in wrong],
            series=[series(g, name=f"glucose {day}", timestamps=list(frame.index.strftime("%Y-%m-%d %H:%M")),
                           unit="mg/dL")],
            rationale=(f"{inside} of {len(g)} readings are within 70-180 mg/dL: {pct:.1f}%, rounded to {correct}%; "
                       f"{int((g < 70).sum())} readings are below 70 and {int((g > 180).sum())} above 180."),
            metadata={"record_ids": [day], "tir_pct": round(pct, 2)},
        ))
    return items
