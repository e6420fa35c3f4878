"""Return of a stock over roughly one quarter of a year."""


def question(num_samples):
    rec = handler.records()
    rec = rec[rec["full_year"]]
    rows = rec.to_dict("records")
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        row = rows[int(rng.integers(len(rows)))]
        frame = handler.series(row["record_id"])
        q = int(rng.integers(4))
        part = frame[frame.index.quarter == q + 1]
        price = part["adj_close"].to_numpy(dtype=float)
        ret = float(row["return_pct"])
        try:
            key, wrong = numeric_options(ret, spread=max(3.0, abs(ret) * 0.25), decimals=1, unit="%", low=-99)
        except ValueError:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"{row['ticker']} adjusted close (USD), Q{q + 1} {row['year']} ({dates[0]} to {dates[-1]}). By how "
            "many percent did the price change from the first to the last trading day shown?",
            key, wrong,
            series=[series(price, name=f"{row['ticker']} adj_close", timestamps=dates, unit="USD")],
            rationale=f"The return over the period is {ret:.2f}%.",
            metadata={"record_ids": [row["record_id"]]},
        ))
    return items
