"""Percentage change of the closing price between the first and last day of a stretch."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 31))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        close = frame["adj_close"].to_numpy(dtype=float)[a:a + n]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        pct = 100 * close[-1] / close[0] - 1
        try:
            key, wrong = numeric_options(pct, spread=max(2.0, abs(pct) * 0.05), decimals=1, unit="%")
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker} adjusted closing price (USD) from {dates[0]} to {dates[-1]}. By what percentage did the "
            "price change over this period?",
            key, wrong,
            series=[series(close, name=f"{ticker} adj_close", timestamps=dates, unit="USD")],
            rationale=f"Percentage change: {pct:.2f}%.",
            metadata={"record_ids": [rid]},
        ))
    return items
