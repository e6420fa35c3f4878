"""Total precipitation of a stretch of 10 to 25 days; the options are the totals of four random
stretches of the same length, one of them shown, so the distractors follow the key's own distribution."""


def pick(frame, size):
    start = int(rng.integers(0, len(frame) - size + 1))
    part = frame.iloc[start:start + size]
    return part, float(np.round(part["precipitation"].to_numpy(dtype=float).sum(), 1))


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(r) for r in ids])
    out = []
    attempts = 0
    while len(out) < num_samples and attempts < 100 * num_samples:
        attempts += 1
        size = int(rng.integers(10, 26))
        four = [pick(whole, size) for _ in range(4)]
        totals = sorted(t for _, t in four)
        if min(np.diff(totals)) < 3.0:
            continue
        part, total = four[int(rng.integers(4))]
        rain = part["precipitation"].to_numpy(dtype=float)
        days = list(part.index.strftime("%Y-%m-%d"))
        out.append(mc_item(
            f"The series gives Seattle's daily precipitation (mm) from {days[0]} to {days[-1]}. "
            "How much precipitation fell in total over these days?",
            f"{total:.1f} mm", [f"{t:.1f} mm" for t in totals if t != total],
            series=[series(rain, name="precipitation", timestamps=days, unit="mm")],
            rationale=f"Summing the {len(rain)} daily values gives {total:.1f} mm.",
            metadata={"record_ids": sorted({d[:7] for d in days}), "start": days[0], "n_days": len(rain)},
        ))
    return out
