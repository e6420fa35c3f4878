"""At which position (1-based) does a synthetic series reach its minimum? Distractors are the
positions of the next-lowest values that lie at least 3 samples from the minimum and each other."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_channels"] == 1]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid)["value"].to_numpy(dtype=float)
        n = int(rng.integers(30, 61))
        if len(values) < n:
            continue
        a = int(rng.integers(0, len(values) - n + 1))
        window = values[a:a + n]
        order = np.argsort(window, kind="stable")
        if window[order[1]] - window[order[0]] < 1e-6 * max(1.0, float(np.ptp(window))):
            continue
        picked = [int(order[0])]
        for j in order[1:]:
            if all(abs(int(j) - p) >= 3 for p in picked):
                picked.append(int(j))
            if len(picked) == 4:
                break
        if len(picked) < 4:
            continue
        items.append(mc_item(
            f"This synthetic series has {n} samples (positions 1 to {n}). At which position is its smallest value?",
            f"position {picked[0] + 1}", [f"position {p + 1}" for p in picked[1:]],
            series=[series(window, name="value")],
            rationale=f"The minimum, {window[picked[0]]:.3f}, is at position {picked[0] + 1}.",
            metadata={"record_ids": [rid], "offset": a},
        ))
    return items
