"""Which day of a stretch had the most precipitation? A forecast note comes as context."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        rain = frame["precipitation"].to_numpy(dtype=float)
        order = np.argsort(-rain)
        if rain[order[0]] - rain[order[1]] < 1.0:
            continue
        best = int(order[0])
        dates = list(frame.index.strftime("%Y-%m-%d"))
        wrong = [dates[int(j)] for j in rng.permutation(len(dates)) if int(j) != best][:3]
        note = (f"Forecast archive: a storm warning was issued for {dates[best]}; other days of {rid} carried "
                "routine showers outlooks.")
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) for {rid}. On which date was the precipitation largest?",
            dates[best], wrong,
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            context=note,
            rationale=f"{dates[best]} had {rain[best]:.1f} mm.",
            metadata={"record_ids": [rid]},
        ))
    return items
