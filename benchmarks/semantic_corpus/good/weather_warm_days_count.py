"""How many days of a summer stretch reached a given maximum temperature.

The threshold is drawn per item; the options are the counts of four random stretches of the
same length and months against the same threshold, all different, one of them shown."""

THRESHOLDS = [18.0, 20.0, 22.0, 24.0, 26.0]


def question(num_samples):
    rec = handler.records()
    summer = rec[rec["month"].isin([5, 6, 7, 8, 9])]["record_id"].tolist()
    frames = {r: handler.series(r) for r in summer}
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        threshold = THRESHOLDS[int(rng.integers(len(THRESHOLDS)))]
        size = int(rng.integers(12, 22))
        draws = []
        for _ in range(4):
            f = frames[summer[int(rng.integers(len(summer)))]]
            s = int(rng.integers(0, len(f) - size + 1))
            part = f.iloc[s:s + size]
            draws.append((part, int((part["temp_max"].to_numpy(dtype=float) > threshold).sum())))
        counts = sorted(c for _, c in draws)
        if len(set(counts)) < 4:
            continue
        part, count = draws[int(rng.integers(4))]
        tmax = part["temp_max"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily maximum temperatures in Seattle, {dates[0]} to {dates[-1]} (°C). On how many of these days "
            f"was the maximum above {threshold:.0f} °C?",
            str(count), [str(c) for c in counts if c != count],
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"{count} of the {size} daily maxima exceed {threshold:.0f} °C.",
            metadata={"record_ids": [dates[0][:7]], "threshold_c": threshold},
        ))
    return items
