"""Average daily volume of a stock over a stretch, in millions of shares."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 30))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        vol = frame["volume"].to_numpy(dtype=float)[a:a + n] / 1e6
        mean = float(vol.mean())
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker} daily volume (million shares) from {dates[0]} to {dates[-1]}. What was the average daily "
            "volume?",
            f"{mean:.2f} million", [f"{mean * f:.2f} million" for f in (2, 0.5, 10)],
            series=[series(vol, name=f"{ticker} volume", timestamps=dates, unit="million shares")],
            rationale=f"The mean is {mean:.2f} million shares.",
            metadata={"record_ids": [rid]},
        ))
    return items
