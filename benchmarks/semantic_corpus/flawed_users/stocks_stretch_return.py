"""Percentage change of a stock's adjusted close between the first and last day of a stretch."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    for _ in range(50 * num_samples):
        if len(items) >= num_samples:
            break
        rid = ids[int(rng.integers(len(ids)))]
        adj = handler.series(rid)["adj_close"]
        n = int(rng.integers(10, 61))
        if len(adj) <= n:
            continue
        a = int(rng.integers(0, len(adj) - n))
        part = adj.iloc[a:a + n]
        other = handler.series(ids[(ids.index(rid) + 1) % len(ids)])["adj_close"].iloc[a:a + n]
        if len(other) < n:
            continue
        ret = 100 * (other.iloc[-1] / other.iloc[0] - 1)
        try:
            key, wrong = numeric_options(ret, spread=max(1.5, abs(ret) / 4), decimals=1, unit="%", low=-100)
        except ValueError:
            continue
        first, last = part.index[0].strftime("%Y-%m-%d"), part.index[-1].strftime("%Y-%m-%d")
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"Adjusted closing price (USD) of {ticker} from {first} to {last}. By what percentage did it change "
            f"from {first} to {last}?",
            key, wrong,
            series=[series(part.to_numpy(), name=f"{ticker} adj_close", timestamps=list(part.index.strftime("%Y-%m-%d")),
                           unit="USD")],
            rationale=f"{part.iloc[0]:.4f} -> {part.iloc[-1]:.4f} USD: {ret:.2f}%.",
            metadata={"record_ids": [rid]},
        ))
    return items
