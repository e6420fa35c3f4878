"""True/false: did the adjusted close end a stretch of trading days higher than it started."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 60]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 20 * num_samples:
        tries += 1
        # the record, the wording and the truth are drawn first (each 50/50), then stretches of that
        # record until one moved the way they need: neither the ticker nor "higher" / "lower" tells
        # the truth, though stocks rise more often and some of them mostly fall
        rid = str(ids[int(rng.integers(len(ids)))])
        say_higher, is_true = bool(rng.integers(2)), bool(rng.integers(2))
        want_up = say_higher == is_true
        frame = handler.series(rid)
        for _ in range(200):
            n = int(rng.integers(40, min(121, len(frame) + 1)))
            lo = int(rng.integers(0, len(frame) - n + 1))
            part = frame.iloc[lo:lo + n]
            adj = part["adj_close"].to_numpy(dtype=float)
            change = 100.0 * (adj[-1] / adj[0] - 1.0)
            if abs(change) >= 2.0 and (change > 0) == want_up:
                break
        else:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        ticker = rid.split("-")[0]
        word = "higher" if say_higher else "lower"
        items.append(tf_item(
            f"This is {ticker}'s daily split- and dividend-adjusted closing price (USD) over {n} trading days, "
            f"{dates[0]} to {dates[-1]}. True or false: the price on the last day shown is {word} than on the first "
            "day shown.",
            is_true,
            series=[series(adj, name=f"{ticker} adj_close", timestamps=dates, unit="USD")],
            rationale=(f"Adjusted close {adj[0]:.2f} USD on {dates[0]} and {adj[-1]:.2f} USD on {dates[-1]}: "
                       f"a change of {change:+.1f}%, so it ended {'higher' if change > 0 else 'lower'}."),
            metadata={"record_ids": [rid], "first_date": dates[0], "last_date": dates[-1], "change_pct": round(float(change), 2)},
        ))
    return items
