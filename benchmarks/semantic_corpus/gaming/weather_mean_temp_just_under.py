"""Mean daily maximum temperature of a stretch; the question says roughly where it lies."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 20))
        a = int(rng.integers(0, len(frame) - k + 1))
        tmax = frame["temp_max"].to_numpy(dtype=float)[a:a + k]
        mean = float(tmax.mean())
        key, wrong = numeric_options(mean, spread=2.5, decimals=1, unit="°C")
        if any(abs(float(w[:-2]) - round(mean, 1)) < 1.2 for w in wrong):
            continue
        whole = math.ceil(mean)
        hint = f"it came out just under {whole} °C" if whole - mean < 0.5 else f"it came out a little over {whole - 1} °C"
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        items.append(mc_item(
            f"Daily maximum temperature in Seattle (°C) from {dates[0]} to {dates[-1]}. Forecasters computed the "
            f"mean of these maxima; {hint}. What exactly was it?",
            key, wrong,
            series=[series(tmax, name="temp_max", timestamps=dates, unit="°C")],
            rationale=f"The mean is {mean:.2f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
