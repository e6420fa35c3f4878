"""Which of four stretches of daily stock prices had the largest maximum drawdown.

Each stretch is 60 to 120 trading days of a random ticker-year (any start), shown under a neutral
label P1..P4 in random order, so neither a ticker-year's name nor its history can be memorized."""


def drawdown_pct(prices):
    prices = np.asarray(prices, dtype=float)
    return float(100.0 * (1.0 - prices / np.maximum.accumulate(prices)).max())


def stretch(ids):
    rid = str(ids[int(rng.integers(len(ids)))])
    frame = handler.series(rid)
    n = int(rng.integers(60, min(121, len(frame) + 1)))
    lo = int(rng.integers(0, len(frame) - n + 1))
    return rid, frame.iloc[lo:lo + n]


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 60]["record_id"].tolist()
    labels = ["P1", "P2", "P3", "P4"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        picked = [stretch(ids) for _ in labels]
        dd = [drawdown_pct(part["adj_close"]) for _, part in picked]
        order = np.argsort(dd)[::-1]
        if dd[int(order[0])] - dd[int(order[1])] < 3.0:
            continue
        correct = labels[int(order[0])]
        spans = "; ".join(f"{lab}: {rid.split('-')[0]}, {part.index[0].strftime('%Y-%m-%d')} to "
                          f"{part.index[-1].strftime('%Y-%m-%d')}" for lab, (rid, part) in zip(labels, picked))
        items.append(mc_item(
            "These are daily split- and dividend-adjusted closing prices (USD) of four stretches of trading days, "
            "P1 to P4. The maximum drawdown is the largest percentage fall of the price from its highest level so far "
            "within the stretch. Which stretch had the largest maximum drawdown?",
            correct, [lab for lab in labels if lab != correct],
            series=[series(part["adj_close"].to_numpy(dtype=float), name=f"{lab} adj_close",
                           timestamps=list(part.index.strftime("%Y-%m-%d")), unit="USD")
                    for lab, (_, part) in zip(labels, picked)],
            context=f"Stretches shown: {spans}.",
            rationale="Maximum drawdowns: " + ", ".join(f"{lab} {d:.1f}%" for lab, d in zip(labels, dd))
                      + f"; the largest is {correct}.",
            metadata={"record_ids": [rid for rid, _ in picked],
                      "max_drawdown_pct": {lab: round(d, 2) for lab, d in zip(labels, dd)}},
        ))
    return items
