"""How much higher Mauna Loa CO2 was over the same weeks of a later year (mean of 8 to 26 weeks)."""


def question(num_samples):
    rec = handler.records()
    years = [y for y, n in zip(rec["record_id"], rec["n_weeks"]) if n >= 52]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        i = int(rng.integers(len(years) - 1))
        j = i + int(rng.integers(1, 11))
        if j >= len(years):
            continue
        n = int(rng.integers(8, 27))
        k = int(rng.integers(0, 52 - n + 1))
        first = handler.series(years[i])["co2"].iloc[k:k + n]
        second = handler.series(years[j])["co2"].iloc[k:k + n]
        if first.isna().any() or second.isna().any():
            continue
        diff = float(second.mean() - first.mean())
        try:
            key, wrong = numeric_options(diff, spread=0.6, decimals=2, unit="ppm")
        except ValueError:
            continue

        def when(part):
            return f"{part.index[0]:%Y-%m-%d} to {part.index[-1]:%Y-%m-%d}"

        items.append(mc_item(
            f"The two series are the weekly CO2 concentrations (ppm) at Mauna Loa in weeks {k + 1} to {k + n} of "
            f"{years[i]} (weeks ending {when(first)}) and of {years[j]} (weeks ending {when(second)}). By how much did "
            f"the mean of these weeks in {years[j]} exceed their mean in {years[i]}?",
            key, wrong,
            series=[series(first.to_numpy(), name=f"co2 {years[i]}", timestamps=[f"{d:%Y-%m-%d}" for d in first.index],
                           unit="ppm"),
                    series(second.to_numpy(), name=f"co2 {years[j]}",
                           timestamps=[f"{d:%Y-%m-%d}" for d in second.index], unit="ppm")],
            rationale=f"Means {second.mean():.3f} and {first.mean():.3f} ppm: difference {diff:.3f} ppm.",
            metadata={"record_ids": [years[i], years[j]]},
        ))
    return items
