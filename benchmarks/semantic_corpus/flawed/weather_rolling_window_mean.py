"""Mean daily maximum temperature over the last week or two of a month."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(7, 15))
        end = int(rng.integers(n, len(frame) - 1))
        shown = frame.iloc[end - n:end]
        means = frame["temp_max"].rolling(n).mean()
        answer = float(means.iloc[end])
        dates = list(shown.index.strftime("%Y-%m-%d"))
        key, wrong = numeric_options(answer, spread=0.8, decimals=1, unit="°C")
        items.append(mc_item(
            f"Daily maximum temperature in Seattle, {dates[0]} to {dates[-1]} (°C). What is the mean over these "
            f"{n} days?",
            key, wrong,
            series=[series(shown["temp_max"].to_numpy(dtype=float), name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The {n}-day mean ending on {dates[-1]} is {answer:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
