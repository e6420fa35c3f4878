"""A stock's closing price on a given date; an analyst note comes as context."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 21))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        close = np.round(frame["close"].to_numpy(dtype=float)[a:a + n], 2)
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + n]
        j = int(rng.integers(n))
        try:
            key, wrong = numeric_options(float(close[j]), spread=max(0.5, 0.02 * float(close[j])), decimals=2,
                                         unit="USD", low=0.01)
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        note = f"Analyst note: {ticker} support level watched at {key}; volume was average."
        items.append(mc_item(
            f"{ticker} daily close (USD) from {dates[0]} to {dates[-1]}. What was the close on {dates[j]}?",
            key, wrong,
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            context=note,
            rationale=f"The close on {dates[j]} is {close[j]:.2f} USD.",
            metadata={"record_ids": [rid]},
        ))
    return items
