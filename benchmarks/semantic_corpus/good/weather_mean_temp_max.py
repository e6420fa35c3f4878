"""Mean daily maximum temperature over a random stretch of one month of Seattle weather."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        values = frame["temp_max"].to_numpy(dtype=float)
        dates = list(frame.index.strftime("%Y-%m-%d"))
        size = int(rng.integers(10, 21))
        start = int(rng.integers(0, len(values) - size + 1))
        window = values[start:start + size]
        shown = dates[start:start + size]
        answer = float(window.mean())
        spread = max(float(window.std()) / 2, 0.6)
        key, wrong = numeric_options(answer, spread=spread, decimals=1, unit="°C")
        items.append(mc_item(
            f"These are the daily maximum temperatures (°C) in Seattle from {shown[0]} to {shown[-1]}. "
            "What is their mean, to one decimal?",
            key, wrong,
            series=[series(window, name="temp_max", timestamps=shown, unit="°C")],
            rationale=f"The mean of the {size} daily maxima is {answer:.2f} °C, rounded to {key}.",
            metadata={"record_ids": [rid], "start": shown[0], "n_days": size},
        ))
    return items
