"""Which of two stocks gained more (adjusted close) over the same stretch of trading days?"""


def question(num_samples):
    rec = handler.records()
    years = sorted(set(rec["year"]))
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        year = years[int(rng.integers(len(years)))]
        tickers = rec[rec["year"] == year]["ticker"].tolist()
        if len(tickers) < 4:
            continue
        names = [tickers[int(j)] for j in rng.choice(len(tickers), size=4, replace=False)]
        frames = [handler.series(f"{t}-{year}")["adj_close"] for t in names]
        joined = pd.concat(frames, axis=1, keys=names).dropna()
        n = int(rng.integers(20, 41))
        if len(joined) < n:
            continue
        a = int(rng.integers(0, len(joined) - n + 1))
        part = joined.iloc[a:a + n]
        gains = {t: float(part[t].iloc[-1] / part[t].iloc[0] - 1) for t in names}
        ranked = sorted(gains.values(), reverse=True)
        if ranked[0] - ranked[1] < 0.01:
            continue
        best = max(gains, key=gains.get)
        dates = list(part.index.strftime("%Y-%m-%d"))
        columns = sorted(names)
        shown = [series(part[c].to_numpy(dtype=float), name=f"{t} adj_close", timestamps=dates, unit="USD")
                 for t, c in zip(names, columns)]
        items.append(mc_item(
            f"Adjusted closing prices (USD) of four stocks from {dates[0]} to {dates[-1]}. Which stock had the "
            "largest percentage gain over this period?",
            best, [t for t in names if t != best],
            series=shown,
            rationale="Gains: " + ", ".join(f"{t} {100 * g:.1f}%" for t, g in gains.items()) + ".",
            metadata={"record_ids": [f"{t}-{year}" for t in names]},
        ))
    return items
