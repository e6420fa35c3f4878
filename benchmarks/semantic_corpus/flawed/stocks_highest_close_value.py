"""Highest closing price of a stock over a stretch of trading days."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(15, 31))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        close = part["close"].to_numpy(dtype=float)
        top = float(part["high"].max())
        dates = list(part.index.strftime("%Y-%m-%d"))
        try:
            key, wrong = numeric_options(top, spread=max(0.5, 0.03 * top), decimals=2, unit="USD", low=0.01)
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker} daily closing price (USD) from {dates[0]} to {dates[-1]}. What was the highest close in "
            "this period?",
            key, wrong,
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=f"The highest close is {top:.2f} USD.",
            metadata={"record_ids": [rid]},
        ))
    return items
