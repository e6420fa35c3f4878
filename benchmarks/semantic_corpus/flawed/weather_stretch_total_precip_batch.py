"""Total precipitation of stretches of 12 to 25 days within one calendar year."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(r) for r in ids])
    rain = whole["precipitation"].to_numpy(dtype=float)
    dates = list(whole.index.strftime("%Y-%m-%d"))
    candidates = []
    for _ in range(num_samples * 3):
        size = int(rng.integers(12, 26))
        start = int(rng.integers(0, len(rain) - size))
        candidates.append((start, size))
    totals = [float(rain[s:s + k].sum()) for s, k in candidates]
    usable = [(s, k) for s, k in candidates if dates[s][:4] == dates[s + k - 1][:4]]
    items = []
    for pos, (s, k) in enumerate(usable):
        if len(items) == num_samples:
            break
        total = totals[pos]
        try:
            key, wrong = numeric_options(total, spread=max(3.0, 0.25 * total), decimals=1, unit="mm", low=0)
        except ValueError:
            continue
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) from {dates[s]} to {dates[s + k - 1]}. What was the total over "
            "this period?",
            key, wrong,
            series=[series(rain[s:s + k], name="precipitation", timestamps=dates[s:s + k], unit="mm")],
            rationale=f"The {k} daily values sum to {total:.1f} mm.",
            metadata={"record_ids": sorted({d[:7] for d in dates[s:s + k]})},
        ))
    return items
