"""What was a stock's highest close in a named year?"""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["full_year"]]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        close = frame["close"].to_numpy(dtype=float)
        top = float(close.max())
        try:
            key, wrong = numeric_options(top, spread=max(1.0, 0.05 * top), decimals=2, unit="USD", low=0.01)
        except ValueError:
            continue
        ticker, year = rid.split("-")
        dates = list(frame.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"{ticker} daily closing price (USD) in {year}. What was its highest close of {year}?",
            key, wrong,
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=f"The highest close of {year} is {top:.2f} USD.",
            metadata={"record_ids": [rid]},
        ))
    return items
