"""The lowest value of a 5-day moving average of a stock's close, shown as a derived series."""


def question(num_samples):
    rec = handler.records()
    ids = rec.loc[rec["n_days"] >= 60, "record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        close = handler.series(rid)["close"]
        n = int(rng.integers(20, 41))
        a = int(rng.integers(0, len(close) - n + 1))
        part = close.iloc[a:a + n]
        ma = part.rolling(5).mean().dropna()
        low = float(handler.series(rid)["open"].iloc[a:a + n].rolling(5).mean().min())
        try:
            key, wrong = numeric_options(low, spread=max(0.3, float(ma.std()) / 2), decimals=2, unit="USD", low=0)
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        days = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"The first series is {ticker}'s daily close (USD, not adjusted) from {days[0]} to {days[-1]}; the second "
            "is its 5-day moving average (the mean of each day's close and the four trading days before it), from "
            "the fifth day on. What is the lowest value of the 5-day moving average?",
            key, wrong,
            series=[series(part.to_numpy(), name=f"{ticker} close", timestamps=days, unit="USD"),
                    series(ma.to_numpy(), name=f"{ticker} close 5-day mean", timestamps=days[4:], unit="USD",
                           derived="5-day trailing mean of close")],
            rationale=f"The 5-day mean is lowest at {low:.3f} USD on {ma.idxmin():%Y-%m-%d}.",
            metadata={"record_ids": [rid]},
        ))
    return items
