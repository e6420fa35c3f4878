"""Average daily maximum temperature over two weeks of a month, read off the series."""


def question(num_samples):
    rec = handler.records().set_index("record_id")
    ids = rec.index.tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        start = int(rng.integers(0, len(frame) - 14 + 1))
        part = frame.iloc[start:start + 14]
        answer = float(rec.loc[rid, "mean_temp_max_c"])
        dates = list(part.index.strftime("%Y-%m-%d"))
        key, wrong = numeric_options(answer, spread=1.0, decimals=1, unit="°C")
        items.append(mc_item(
            f"Seattle's daily maximum temperature (°C) for the 14 days {dates[0]} to {dates[-1]}. What is the "
            "average daily maximum over this period?",
            key, wrong,
            series=[series(part["temp_max"].to_numpy(dtype=float), name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The average daily maximum is {answer:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
