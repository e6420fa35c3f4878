"""How many trading days of a stretch closed (adjusted) above a price printed in the question.

The adjusted close has many decimals: the price is a close of the stretch rounded to cents first, and
the days are counted against that rounded price, the one the reader sees."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        adj = handler.series(rid)["adj_close"]
        n = int(rng.integers(10, 31))
        if len(adj) < n:
            continue
        a = int(rng.integers(0, len(adj) - n + 1))
        part = adj.iloc[a:a + n].to_numpy(dtype=float)
        price = float(part[int(rng.integers(n))])
        count = int(np.sum(part > price))
        try:
            key, wrong = numeric_options(count, spread=max(1.5, n / 8), decimals=0, low=0, high=n, step=1)
        except ValueError:
            continue
        ticker = rid.split("-")[0]
        days = list(adj.index[a:a + n].strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Adjusted closing prices (USD) of {ticker} on the {n} trading days from {days[0]} to {days[-1]}. On how "
            f"many of these days was the adjusted close above {price:.2f} USD?",
            key, wrong,
            series=[series(part, name=f"{ticker} adj_close", timestamps=days, unit="USD")],
            rationale=f"{count} of the {n} adjusted closes exceed {price:.2f} USD.",
            metadata={"record_ids": [rid]},
        ))
    return items
