"""At which hour of a day was Seattle's temperature lowest (hourly readings of 2010)."""


def question(num_samples):
    months = sorted(handler.records()["record_id"])
    hourly = pd.concat([handler.series(m) for m in months])["temp"]
    days = [day for day, part in hourly.groupby(hourly.index.date) if len(part) == 24]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        day = days[int(rng.integers(len(days)))]
        part = hourly[hourly.index.date == day]
        temps = part.to_numpy(dtype=float)
        hours = [t.strftime("%H:%M") for t in part.index]
        order = np.argsort(temps, kind="stable")
        if temps[order[0]] == temps[order[1]]:
            continue  # the lowest reading occurs twice
        low = int(order[0])
        items.append(mc_item(
            f"The series is the hourly air temperature (°F) in Seattle on {day:%Y-%m-%d}, from 00:00 to 23:00. "
            "At which hour was the temperature lowest?",
            hours[low], [hours[int(i)] for i in order[1:4]],
            series=[series(temps, name="temp", timestamps=[t.strftime("%Y-%m-%d %H:%M") for t in part.index],
                           unit="°F")],
            rationale=f"The lowest reading, {temps[low]:.1f} °F, is at {hours[low]}.",
            metadata={"record_ids": [f"{day:%Y-%m}"]},
        ))
    return items
