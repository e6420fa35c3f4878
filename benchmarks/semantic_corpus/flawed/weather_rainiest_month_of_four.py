"""Which of four months had the most rainy days (precipitation above 0 mm)?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        picks = [ids[int(j)] for j in rng.choice(len(ids), size=4, replace=False)]
        months = [handler.series(r) for r in picks]
        counts = [int((m["precipitation"] > 0).sum()) for m in months]
        best = picks[int(np.argmax(counts))]
        items.append(mc_item(
            "Each series is the daily precipitation (mm) of one month in Seattle. Which month had the most days "
            "with precipitation above 0 mm?",
            best, [r for r in picks if r != best],
            series=[series(m["precipitation"].to_numpy(dtype=float), name=r, timestamps=list(m.index.strftime("%Y-%m-%d")),
                           unit="mm") for r, m in zip(picks, months)],
            rationale="Rainy days: " + ", ".join(f"{r}: {c}" for r, c in zip(picks, counts)) + ".",
            metadata={"record_ids": picks},
        ))
    return items
