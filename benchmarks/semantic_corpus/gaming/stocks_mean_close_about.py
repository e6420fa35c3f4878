"""Roughly what was a stock's average closing price over a stretch?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(15, 40))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        close = frame["close"].to_numpy(dtype=float)[a:a + n]
        mean = float(close.mean())
        if mean < 40:
            continue
        key = int(10 * round(mean / 10))
        offsets = rng.choice([-17, -13, -8, -6, 6, 8, 13, 17], size=3, replace=False)
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker} daily close (USD) from {dates[0]} to {dates[-1]}. Roughly what was the average close?",
            f"{key} USD", [f"{key + int(o)} USD" for o in offsets],
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=f"The mean close is {mean:.2f} USD, roughly {key} USD.",
            metadata={"record_ids": [rid]},
        ))
    return items
