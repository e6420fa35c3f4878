"""Mean of the daily maximum temperature over a random stretch."""

COLUMN = "temp_max"


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 22))
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        answer = float(part.iloc[:, 2].mean())
        dates = list(part.index.strftime("%Y-%m-%d"))
        key, wrong = numeric_options(answer, spread=1.0, decimals=1, unit="°C")
        items.append(mc_item(
            f"Daily maximum temperatures in Seattle from {dates[0]} to {dates[-1]} (°C). What is their mean?",
            key, wrong,
            series=[series(part[COLUMN].to_numpy(dtype=float), name=COLUMN, timestamps=dates, unit="°C")],
            rationale=f"Mean of {n} values: {answer:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
