"""Which trading day of a stretch had the largest volume; the distractors are other trading days."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        n = int(rng.integers(10, 21))
        if len(frame) < n:
            continue
        a = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[a:a + n]
        vol = part["volume"].to_numpy(dtype=float) / 1e6
        order = np.argsort(-vol)
        if vol[order[0]] < 1.05 * vol[order[1]]:
            continue
        dates = list(part.index.strftime("%Y-%m-%d"))
        best = int(order[0])
        wrong = [dates[int(j)] for j in rng.permutation(n) if int(j) != best][:3]
        ticker = rid.split("-")[0]
        items.append(mc_item(
            f"Daily trading volume of {ticker} (millions of shares) from {dates[0]} to {dates[-1]}. "
            "On which trading day was the volume largest?",
            dates[best], wrong,
            series=[series(vol, name=f"{ticker} volume", timestamps=dates, unit="million shares")],
            rationale=f"The largest volume, {vol[best]:.2f} million shares, was traded on {dates[best]}.",
            metadata={"record_ids": [rid]},
        ))
    return items
