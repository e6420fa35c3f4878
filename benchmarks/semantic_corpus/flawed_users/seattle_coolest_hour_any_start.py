"""At which hour of 24 consecutive hours (starting at any hour of 2010) was Seattle's temperature lowest."""


def question(num_samples):
    months = sorted(handler.records()["record_id"])
    hourly = pd.concat([handler.series(m) for m in months])["temp"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        start = int(rng.integers(0, len(hourly) - 24))
        part = hourly.iloc[start:start + 24]
        if part.index[-1] - part.index[0] != pd.Timedelta(hours=23):
            continue  # the stretch crosses the missing hour of 2010-03-14
        temps = hourly.iloc[start + 1:start + 25].to_numpy(dtype=float)
        labels = [t.strftime("%Y-%m-%d %H:%M") for t in part.index]
        order = np.argsort(temps, kind="stable")
        if temps[order[0]] == temps[order[1]]:
            continue
        low = int(order[0])
        items.append(mc_item(
            f"Hourly air temperature (°F) in Seattle for the 24 hours from {labels[0]} to {labels[-1]}. At which hour "
            "was the temperature lowest?",
            labels[low], [labels[int(i)] for i in order[1:4]],
            series=[series(temps, name="temp", timestamps=labels, unit="°F")],
            rationale=f"The lowest reading, {temps[low]:.1f} °F, is at {labels[low]}.",
            metadata={"record_ids": sorted({t[:7] for t in labels})},
        ))
    return items
