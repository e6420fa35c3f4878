"""On which trading day of a stretch did a stock close highest?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(12, 25))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        close = part["close"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        order = np.argsort(-close)
        if close[order[0]] - close[order[1]] < 0.05:
            continue
        best = int(order[0])
        wrong = [dates[int(j)] for j in rng.permutation(n) if int(j) != best][:3]
        ticker = rid.split("-")[0]
        note = (f"Market note: {ticker} traded between {part['low'].min():.2f} and {part['high'].max():.2f} USD "
                f"in this period, setting its high for the period on {dates[best]}.")
        items.append(mc_item(
            f"{ticker} daily closing price (USD), {dates[0]} to {dates[-1]}. On which day was the close highest?",
            dates[best], wrong,
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            context=note,
            rationale=f"The highest close, {close[best]:.2f} USD, was on {dates[best]}.",
            metadata={"record_ids": [rid]},
        ))
    return items
