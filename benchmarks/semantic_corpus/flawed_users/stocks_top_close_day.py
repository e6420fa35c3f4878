"""On which trading day of a stretch was a stock's closing price highest (dates as options)."""


def question(num_samples):
    rec = handler.records()
    ids = rec.loc[rec["n_days"] >= 60, "record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(15, 41))
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        close = part["close"].to_numpy(dtype=float)
        top = int(np.argmax(close))
        if np.count_nonzero(close == close[top]) > 1:
            continue
        days = list(part.index.strftime("%Y-%m-%d"))
        others = [days[int(i)] for i in rng.choice([i for i in range(n) if i != top], size=3, replace=False)]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"{ticker}'s daily closing price (USD, not adjusted) on the {n} trading days from {frame.index[a - 1]:%Y-%m-%d} to "
            f"{days[-1]}. On which trading day was the close highest?",
            days[top], others,
            series=[series(close, name=f"{ticker} close", timestamps=days, unit="USD")],
            rationale=f"The highest close, {close[top]:.2f} USD, was on {days[top]}.",
            metadata={"record_ids": [rid]},
        ))
    return items
