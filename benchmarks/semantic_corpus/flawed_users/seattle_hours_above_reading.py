"""How many hourly readings of one to three days were above a temperature printed in whole degrees."""


def question(num_samples):
    months = list(handler.records()["record_id"])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        month = months[int(rng.integers(len(months)))]
        temp = handler.series(month)["temp"]
        hours = 24 * int(rng.integers(1, 4))
        start = 24 * int(rng.integers(0, len(temp) // 24 - hours // 24 + 1))
        part = temp.iloc[start:start + hours]
        if len(part) < hours:
            continue
        values = part.to_numpy(dtype=float)
        limit = float(values[int(rng.integers(len(values)))])
        count = int((values > limit).sum())
        try:
            key, wrong = numeric_options(count, spread=max(2.0, hours / 10), decimals=0, low=0, high=len(values),
                                         step=1)
        except ValueError:
            continue
        stamps = [t.strftime("%Y-%m-%d %H:%M") for t in part.index]
        items.append(mc_item(
            f"Hourly air temperature (°F) in Seattle from {stamps[0]} to {stamps[-1]} ({len(values)} readings). "
            f"How many of these readings were above {limit:.0f} °F?",
            key, wrong,
            series=[series(values, name="temp", timestamps=stamps, unit="°F")],
            rationale=f"{count} of the {len(values)} readings exceed {limit:.0f} °F.",
            metadata={"record_ids": [month]},
        ))
    return items
