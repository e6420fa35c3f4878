"""Which statement about the number of rainy days in a stretch is correct?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        rain = frame["precipitation"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        wet = int((rain > 0).sum())
        if wet < 6 or wet > len(rain) - 4:
            continue
        right = f"at least {wet - 2} days"
        wrong = [f"at least {wet + j} days" for j in (-5, 1, 3)]
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) for {rid}. Which statement about the number of days with "
            "precipitation above 0 mm is true?",
            right, wrong,
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"{wet} days had precipitation, so there were {right}.",
            metadata={"record_ids": [rid]},
        ))
    return items
