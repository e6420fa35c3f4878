"""Which month of a stretch of 6 to 18 consecutive months carried the most airline passengers.

Stretches start in any month of 1949-1960, so there are many of them (a year alone gives only 12
questions, and three of those years peak in July and August alike). The wrong options are the
months with the next-highest values."""

def question(num_samples):
    years = sorted(handler.records()["record_id"])
    monthly = pd.concat([handler.series(y) for y in years])["passengers"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        length = int(rng.integers(6, 19))
        start = int(rng.integers(0, len(monthly) - length + 1))
        part = monthly.iloc[start:start + length]
        values = part.to_numpy(dtype=float)
        labels = [d.strftime("%B %Y") for d in part.index]
        ranked = np.argsort(-values, kind="stable")
        best = int(ranked[0])
        picked = ranked[1:4]  # the runners-up
        items.append(mc_item(
            f"Monthly international airline passengers (thousands) from {labels[0]} to {labels[-1]}. "
            "Which month of this stretch had the most passengers?",
            labels[best], [labels[int(i)] for i in picked],
            series=[series(values, name="passengers", timestamps=[d.strftime("%Y-%m-%d") for d in part.index],
                           unit="thousand passengers")],
            rationale=f"The largest value, {values[best]:.0f}, is in {labels[best]}.",
            metadata={"record_ids": sorted({str(d.year) for d in part.index})},
        ))
    return items
