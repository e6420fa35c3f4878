"""Which of several ticker-years had the largest maximum drawdown of the adjusted close."""


def drawdown_pct(prices):
    prices = np.asarray(prices, dtype=float)
    return float(100.0 * (1.0 - prices / np.maximum.accumulate(prices)).max())


def question(num_samples):
    rec = handler.records()
    ids = rec[rec["n_days"] >= 150]["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        k = int(rng.integers(3, 5))
        picked = sorted(str(r) for r in rng.choice(ids, size=k, replace=False))
        frames = [handler.series(r) for r in picked]
        dd = [drawdown_pct(f["adj_close"]) for f in frames]
        order = np.argsort(dd)[::-1]
        if dd[int(order[0])] - dd[int(order[1])] < 3.0:
            continue
        correct = picked[int(order[0])]
        spans = "; ".join(f"{r}: {f.index[0].year}-{f.index[0].month:02d}-{f.index[0].day:02d} to "
                          f"{f.index[-1].year}-{f.index[-1].month:02d}-{f.index[-1].day:02d}"
                          for r, f in zip(picked, frames))
        items.append(mc_item(
            f"These are daily split- and dividend-adjusted closing prices (USD) of {k} stock ticker-years. The maximum "
            "drawdown is the largest percentage fall of the price from its highest level so far within the period. "
            "Which ticker-year had the largest maximum drawdown?",
            correct, [r for r in picked if r != correct],
            series=[series(f["adj_close"].to_numpy(dtype=float), name=f"{r} adj_close",
                           timestamps=list(f.index.strftime("%Y-%m-%d")), unit="USD") for r, f in zip(picked, frames)],
            context=f"Periods shown: {spans}.",
            rationale="Maximum drawdowns: " + ", ".join(f"{r} {d:.1f}%" for r, d in zip(picked, dd))
                      + f"; the largest is {correct}.",
            metadata={"record_ids": picked, "max_drawdown_pct": {r: round(d, 2) for r, d in zip(picked, dd)}},
        ))
    return items
