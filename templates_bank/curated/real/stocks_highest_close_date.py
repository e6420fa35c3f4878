"""On which trading day of a stretch was the closing price highest (or lowest).

Options name days by position ("day 12"), not by date, so the few all-time-high days of 2000-2013
cannot be memorized. The options are the keyed days of four random split-free stretches of one
length, all asking the same (highest or lowest), one of them (drawn uniformly) shown: the
distractors follow the key's own distribution. (Extremes sit near a stretch's first or last day
most often, the arcsine law; distractors picked among the shown stretch's other days, even in its
middle half only, left the key's day number the one nearest an edge too often.)"""


def split_days(frame):
    """Per day: True where the close and adjusted-close changes differ by more than 20 points (a stock split)."""
    gap = (frame["close"].pct_change() - frame["adj_close"].pct_change()).abs()
    return (gap > 0.2).to_numpy()


def draw(frames, n, lowest):
    """A random split-free stretch of `n` days whose extreme close is at least 0.5% clear of every
    other day's: (record id, frame, first row, keyed day index), or None."""
    rid, frame, close_all, split = frames[int(rng.integers(len(frames)))]
    lo = int(rng.integers(0, len(frame) - n + 1))
    if split[lo + 1:lo + n].any():
        return None
    close = close_all[lo:lo + n]
    score = -close if lowest else close  # the keyed day maximizes `score`
    top = int(np.argmax(score))
    if np.delete(score, top).max() > score[top] - 0.005 * close[top]:
        return None
    return rid, frame, lo, top


def question(num_samples):
    rec = handler.records()
    frames = []
    for rid in rec[rec["n_days"] >= 60]["record_id"].tolist():
        frame = handler.series(rid)
        frames.append((str(rid), frame, frame["close"].to_numpy(dtype=float), split_days(frame)))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n, lowest = int(rng.integers(25, 61)), bool(rng.integers(2))
        quad = [draw(frames, n, lowest) for _ in range(4)]
        if any(q is None for q in quad) or len({q[3] for q in quad}) < 4:
            continue
        rid, frame, lo, top = quad[int(rng.integers(4))]
        part = frame.iloc[lo:lo + n]
        close = part["close"].to_numpy(dtype=float)
        wrong = [q[3] for q in quad if q[3] != top]
        dates = list(part.index.strftime("%Y-%m-%d"))
        word = "lowest" if lowest else "highest"
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily closing price (USD, not adjusted) over {n} trading days, {dates[0]} to "
            f"{dates[-1]}. Counting the first trading day shown as day 1, on which day was the closing price {word}?",
            f"day {top + 1}", [f"day {i + 1}" for i in wrong],
            series=[series(close, name=f"{ticker} close", timestamps=dates, unit="USD")],
            rationale=(f"The {word} close is {close[top]:.2f} USD on day {top + 1} ({dates[top]}), at least 0.5% clear "
                       "of every other day. Distractor days (the keyed days of other random stretches) close at "
                       + ", ".join(f"{close[i]:.2f}" for i in wrong) + " USD."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1], "extreme": word,
                      "close": float(close[top])},
        ))
    return items
