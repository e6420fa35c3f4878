"""On which trading day of a stretch did a stock make its largest one-day percentage move.

Options name days by position in the stretch ("day 17"): with calendar dates a solver could
memorize the few record-move days of 2000-2013, keyed in every stretch that holds them."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 60]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        n = int(rng.integers(40, 81))
        lo = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[lo:lo + n]
        adj = part["adj_close"].to_numpy(dtype=float)
        moves = 100.0 * (adj[1:] / adj[:-1] - 1.0)
        order = np.argsort(-np.abs(moves))
        first, second = abs(moves[int(order[0])]), abs(moves[int(order[1])])
        if first - second < 0.75:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        key = int(order[0]) + 1
        wrong_idx = [int(i) + 1 for i in order[1:4]]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"This is {ticker}'s daily split- and dividend-adjusted closing price (USD) over {n} trading days, "
            f"{dates[0]} to {dates[-1]}. On which trading day did the price make its largest one-day move (up or down), "
            "measured as the percentage change from the previous trading day's close? Count the first trading day "
            "shown as day 1.",
            f"day {key + 1}", [f"day {i + 1}" for i in wrong_idx],
            series=[series(adj, name=f"{ticker} adj_close", timestamps=dates, unit="USD")],
            rationale=(f"The largest move is {moves[key - 1]:+.2f}% on day {key + 1}, {dates[key]} ({adj[key - 1]:.2f} -> "
                       f"{adj[key]:.2f} USD); the next largest are "
                       + ", ".join(f"{moves[i - 1]:+.2f}% on day {i + 1}" for i in wrong_idx) + "."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1],
                      "move_pct": round(float(moves[key - 1]), 3)},
        ))
    return items
