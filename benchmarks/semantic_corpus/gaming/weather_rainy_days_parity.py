"""How many days of a month had precipitation above 0 mm?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        rain = frame["precipitation"].to_numpy(dtype=float)
        wet = int((rain > 0).sum())
        near = [wet + d for d in (-5, -3, -1, 1, 3, 5) if 0 <= wet + d <= len(rain)]
        if len(near) < 3:
            continue
        wrong = [near[int(j)] for j in rng.choice(len(near), size=3, replace=False)]
        dates = list(frame.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) for {dates[0]} to {dates[-1]}. On how many days was it above 0 mm?",
            str(wet), [str(w) for w in wrong],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"{wet} days had precipitation.",
            metadata={"record_ids": [rid]},
        ))
    return items
