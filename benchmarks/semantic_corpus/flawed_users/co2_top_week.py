"""In which week of a stretch of 20 to 52 weeks was the CO2 concentration at Mauna Loa highest.

The wrong options are the weeks with the next-highest values, so the question needs the data and not
only the season; a stretch whose highest value occurs in two weeks is not asked."""


def question(num_samples):
    years = sorted(handler.records()["record_id"])
    co2 = pd.concat([handler.series(y) for y in years])["co2"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n = int(rng.integers(20, 53))
        start = int(rng.integers(0, len(co2) - n + 1))
        part = co2.iloc[start:start + n]
        if part.isna().any():
            continue
        values = part.to_numpy(dtype=float)
        weeks = [d.strftime("%Y-%m-%d") for d in part.index]
        ranked = np.argsort(-values, kind="stable")
        if values[ranked[0]] == values[ranked[1]]:
            continue
        top = int(ranked[0])
        items.append(mc_item(
            f"Weekly CO2 concentration (ppm) at Mauna Loa for the {n} weeks ending {weeks[0]} to {weeks[-1]} "
            "(each week is named by the Saturday that ends it). In which week was the concentration highest?",
            weeks[top], [weeks[int(i)] for i in ranked[1:3]] + [part.index[top].strftime("%b %d, %Y")],
            series=[series(values, name="co2", timestamps=weeks, unit="ppm")],
            rationale=f"The highest value, {values[top]:.1f} ppm, is in the week ending {weeks[top]}.",
            metadata={"record_ids": sorted({w[:4] for w in weeks})},
        ))
    return items
