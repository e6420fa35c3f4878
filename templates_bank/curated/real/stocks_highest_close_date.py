"""On which trading day of a stretch was the closing price highest (or lowest).

Options name days by position ("day 12"), not by date, so the few all-time-high days of 2000-2013
cannot be memorized; highest and lowest are asked equally often, so a trend (the high late, the
low early in a rising stretch) does not make the key the latest or earliest option. The extreme
and the distractors lie in the middle half of the stretch (extremes sit near the edges most often,
which made the key's day number the smallest or largest option, and a one-digit one, too often)."""


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
        lowest = bool(rng.integers(2))
        close = part["close"].to_numpy(dtype=float)
        score = -close if lowest else close  # the keyed day maximizes `score`
        dates = list(part.index.strftime("%Y-%m-%d"))
        top = int(np.argmax(score))
        rest = np.delete(score, top)
        # a stretch's extreme falls near its first or last day more often than anywhere else (arcsine
        # law): keep only stretches whose extreme lies in the middle half, distractors from there too
        if rest.max() > score[top] - 0.005 * close[top] or not n // 4 <= top < n - n // 4:
            continue
        # distractors: other local extremes first, then the most extreme remaining days, all clearly short of it
        clear = [i for i in range(n // 4, n - n // 4) if i != top and score[i] <= score[top] - 0.005 * close[top]]
        local = [i for i in clear if (i == 0 or score[i] >= score[i - 1]) and (i == n - 1 or score[i] >= score[i + 1])]
        local = sorted(local, key=lambda i: -score[i])
        others = sorted([i for i in clear if i not in local], key=lambda i: -score[i])
        wrong = (local + others)[:3]
        word = "lowest" if lowest else "highest"
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily closing price (USD, not adjusted) over {n} trading days, {dates[0]} to "
            f"{dates[-1]}. Counting the first trading day shown as day 1, on which day was the closing price {word}?",
            f"day {top + 1}", [f"day {i + 1}" for i in wrong],
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=(f"The {word} close is {close[top]:.2f} USD on day {top + 1} ({dates[top]}); the next {word} is "
                       f"{abs(rest.max()):.2f} USD. Distractor days close at "
                       + ", ".join(f"{close[i]:.2f}" for i in wrong) + " USD."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1], "extreme": word, "close": float(close[top])},
        ))
    return items
