"""Average intraday range (high minus low) as a percentage of the close."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        part = handler.series(rid)
        n = int(rng.integers(10, 21))
        if len(part) < n:
            continue
        a = int(rng.integers(0, len(part) - n + 1))
        part = part.iloc[a:a + n]
        high = part["high"].to_numpy(dtype=float)
        low = part["low"].to_numpy(dtype=float)
        close = part["close"].to_numpy(dtype=float)
        avg = float(np.mean(high - low / close * 100))
        try:
            key, wrong = numeric_options(avg, spread=max(0.3, abs(avg) * 0.2), decimals=2, unit="%")
        except ValueError:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker} daily high, low and close (USD) from {dates[0]} to {dates[-1]}. On average, how large was "
            "the daily range (high minus low) as a percentage of that day's close?",
            key, wrong,
            series=[series(high, name="high", timestamps=dates, unit="USD"),
                    series(low, name="low", timestamps=dates, unit="USD"),
                    series(close, name="close", timestamps=dates, unit="USD")],
            rationale=f"Mean of (high - low) / close: {avg:.2f}%.",
            metadata={"record_ids": [rid]},
        ))
    return items
