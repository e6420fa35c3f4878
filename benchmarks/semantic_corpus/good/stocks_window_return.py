"""Percentage change of a stock's adjusted close over a stretch of trading days."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid).dropna()
        n = int(rng.integers(15, 41))
        if len(frame) < n + 1:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        price = part["adj_close"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        change = 100.0 * (price[-1] / price[0] - 1.0)
        try:
            key, wrong = numeric_options(change, spread=max(2.0, abs(change) * 0.3), decimals=1, unit="%",
                                         low=-99.0)
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s split- and dividend-adjusted closing price (USD) over {n} trading days, "
            f"{dates[0]} to {dates[-1]}. By what percentage did it change from the first to the last day?",
            key, wrong,
            series=[series(price, name=f"{ticker} adj_close", timestamps=dates, unit="USD")],
            rationale=f"100 * ({price[-1]:.4f} / {price[0]:.4f} - 1) = {change:.2f}%.",
            metadata={"record_ids": [rid], "start": dates[0], "end": dates[-1]},
        ))
    return items
