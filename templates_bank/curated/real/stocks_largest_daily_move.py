"""On which trading day of a stretch did a stock make its largest one-day percentage move.

Options name days by position in the stretch ("day 17"): with calendar dates a solver could
memorize the few record-move days of 2000-2013, keyed in every stretch that holds them. The
options are the keyed days of four random stretches of one length, one of them (drawn uniformly)
shown: the distractors follow the key's own distribution (the days of the shown stretch's next
largest moves, which cluster with the largest, left the key's day number the one nearest the
stretch's middle too often)."""


def draw(frames, n):
    """A random stretch of `n` trading days whose largest |move| leads the next by at least 0.75
    points: (record id, stretch, index of the largest move's day), or None."""
    rid, frame, adj_all = frames[int(rng.integers(len(frames)))]
    lo = int(rng.integers(0, len(frame) - n + 1))
    part = frame.iloc[lo:lo + n]
    adj = adj_all[lo:lo + n]
    moves = np.abs(100.0 * (adj[1:] / adj[:-1] - 1.0))
    order = np.argsort(-moves)
    if moves[int(order[0])] - moves[int(order[1])] < 0.75:
        return None
    return rid, part, int(order[0]) + 1


def question(num_samples):
    rec = handler.records()
    frames = [(str(rid), frame, frame["adj_close"].to_numpy(dtype=float))
              for rid, frame in ((rid, handler.series(rid)) for rid in rec[rec["n_days"] >= 60]["record_id"].tolist())]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n = int(rng.integers(40, 81))
        quad = [draw(frames, n) for _ in range(4)]
        if any(q is None for q in quad) or len({q[2] for q in quad}) < 4:
            continue
        rid, part, key = quad[int(rng.integers(4))]
        wrong = [q[2] for q in quad if q[2] != key]
        adj = part["adj_close"].to_numpy(dtype=float)
        moves = 100.0 * (adj[1:] / adj[:-1] - 1.0)
        dates = list(part.index.strftime("%Y-%m-%d"))
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily split- and dividend-adjusted closing price (USD) over {n} trading days, "
            f"{dates[0]} to {dates[-1]}. On which trading day did the price make its largest one-day move (up or down), "
            "measured as the percentage change from the previous trading day's close? Count the first trading day "
            "shown as day 1.",
            f"day {key + 1}", [f"day {i + 1}" for i in wrong],
            series=[series(adj, name=f"{ticker} adj_close", timestamps=dates, unit="USD")],
            rationale=(f"The largest move is {moves[key - 1]:+.2f}% on day {key + 1}, {dates[key]} ({adj[key - 1]:.2f} -> "
                       f"{adj[key]:.2f} USD), at least 0.75 points above any other; the distractors are the largest-move "
                       "days of other random stretches: "
                       + ", ".join(f"{moves[i - 1]:+.2f}% on day {i + 1}" for i in wrong) + "."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1],
                      "move_pct": round(float(moves[key - 1]), 3)},
        ))
    return items
