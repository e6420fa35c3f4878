"""On which date of a stretch of trading days was the closing price highest."""


def no_split(part):
    """True when no day's close and adjusted-close changes differ by more than 20 points (a stock split)."""
    gap = (part["close"].pct_change() - part["adj_close"].pct_change()).abs()
    return not bool((gap > 0.2).any())


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 60]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        n = int(rng.integers(25, 61))
        lo = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[lo:lo + n]
        if not no_split(part):
            continue
        close = part["close"].to_numpy(dtype=float)
        dates = list(part.index.strftime("%Y-%m-%d"))
        top = int(np.argmax(close))
        rest = np.delete(close, top)
        if rest.max() > close[top] * 0.995:
            continue
        # distractors: other local highs first, then the highest remaining days, all clearly below the maximum
        local = [i for i in range(n) if i != top and close[i] <= close[top] * 0.995
                 and (i == 0 or close[i] >= close[i - 1]) and (i == n - 1 or close[i] >= close[i + 1])]
        local = sorted(local, key=lambda i: -close[i])
        others = sorted([i for i in range(n) if i != top and i not in local and close[i] <= close[top] * 0.995],
                        key=lambda i: -close[i])
        wrong = (local + others)[:3]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily closing price (USD, not adjusted) over {n} trading days, {dates[0]} to "
            f"{dates[-1]}. On which date was the closing price highest?",
            dates[top], [dates[i] for i in wrong],
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=(f"The highest close is {close[top]:.2f} USD on {dates[top]}; the next highest is "
                       f"{rest.max():.2f} USD. Distractor dates close at "
                       + ", ".join(f"{close[i]:.2f}" for i in wrong) + " USD."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1], "max_close": float(close[top])},
        ))
    return items
