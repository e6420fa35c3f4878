"""Read a stock's closing price on a given date off the series."""


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        n = int(rng.integers(10, 21))
        if len(frame) < n:
            continue
        lo = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[lo:lo + n]
        close = np.round(part["close"].to_numpy(dtype=float), 2)
        dates = list(part.index.strftime("%Y-%m-%d"))
        key = int(rng.integers(n))
        chosen = [float(close[key])]
        wrong = []
        for i in rng.permutation(n):
            v = float(close[int(i)])
            if all(abs(v - c) >= max(0.1, 0.004 * c) for c in chosen):
                chosen.append(v)
                wrong.append(v)
            if len(wrong) == 3:
                break
        if len(wrong) < 3:
            continue
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily closing price (USD, not adjusted) over {n} trading days, {dates[0]} to "
            f"{dates[-1]}. What was the closing price on {dates[key]}?",
            f"{close[key]:.2f} USD", [f"{v:.2f} USD" for v in wrong],
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=(f"The close on {dates[key]} is {close[key]:.2f} USD. The distractors are closes of other days "
                       "in the same stretch: " + ", ".join(
                           f"{v:.2f} USD on {dates[int(np.flatnonzero(close == v)[0])]}" for v in wrong) + "."),
            metadata={"record_ids": [rid], "date": dates[key], "close": float(close[key])},
        ))
    return items
