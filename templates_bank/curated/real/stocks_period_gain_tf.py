"""True/false: did the adjusted close end a stretch of trading days higher than it started."""


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 60]["record_id"].tolist()
    items = []
    tries = 0
    say_higher, is_true = bool(rng.integers(2)), bool(rng.integers(2))
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        # the wording and the truth are drawn once per item (each 50/50), then stretches until one
        # moved the way they need: "higher" is as often true as "lower", though stocks rise more often
        want_up = say_higher == is_true
        rid = str(ids[int(rng.integers(len(ids)))])
        frame = handler.series(rid)
        n = int(rng.integers(40, min(121, len(frame) + 1)))
        lo = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[lo:lo + n]
        adj = part["adj_close"].to_numpy(dtype=float)
        change = 100.0 * (adj[-1] / adj[0] - 1.0)
        if abs(change) < 2.0 or (change > 0) != want_up:
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
        say_higher, is_true = bool(rng.integers(2)), bool(rng.integers(2))
    return items
