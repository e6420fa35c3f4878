"""Total precipitation over a stretch of 10-20 days; options are totals of other stretches."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(r) for r in ids])
    rain = whole["precipitation"].to_numpy(dtype=float)
    dates = list(whole.index.strftime("%Y-%m-%d"))
    cum = np.concatenate([[0.0], np.cumsum(rain)])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        size = int(rng.integers(10, 21))
        starts = [int(rng.integers(1, len(rain) - size)) for _ in range(4)]
        totals = [round(float(cum[s + size - 1] - cum[s - 1]), 1) for s in starts]
        if min(np.diff(sorted(totals))) < 3.0:
            continue
        pick = int(rng.integers(4))
        s = starts[pick]
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm), {dates[s]} to {dates[s + size - 1]}. What was the total "
            "over the period?",
            f"{totals[pick]:.1f} mm", [f"{t:.1f} mm" for i, t in enumerate(totals) if i != pick],
            series=[series(rain[s:s + size], name="precipitation", timestamps=dates[s:s + size], unit="mm")],
            rationale=f"Sum of the daily values: {totals[pick]:.1f} mm.",
            metadata={"record_ids": sorted({d[:7] for d in dates[s:s + size]})},
        ))
    return items
