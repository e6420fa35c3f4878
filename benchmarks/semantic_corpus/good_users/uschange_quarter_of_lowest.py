"""In which quarter of a stretch did a US series change the least (options: quarters such as 1982 Q1)."""

NAMES = {"consumption": "real personal consumption", "income": "real disposable income",
         "production": "industrial production"}


def quarter_label(day):
    return f"{day.year} Q{(day.month - 1) // 3 + 1}"


def question(num_samples):
    decades = sorted(handler.records()["record_id"])
    frame = pd.concat([handler.series(d) for d in decades])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        column = list(NAMES)[int(rng.integers(len(NAMES)))]
        n = int(rng.integers(8, 25))
        start = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[start:start + n]
        values = part[column].to_numpy(dtype=float)
        labels = [quarter_label(d) for d in part.index]
        low = int(np.argmin(values))
        if (values == values[low]).sum() > 1:
            continue
        others = rng.choice([i for i in range(n) if i != low], size=3, replace=False)
        items.append(mc_item(
            f"The series is the quarterly percentage change of US {NAMES[column]} from {labels[0]} to {labels[-1]} "
            "(each value is the change from the previous quarter, %). In which quarter was the change lowest?",
            labels[low], [labels[int(i)] for i in others],
            series=[series(values, name=column, timestamps=[d.strftime("%Y-%m-%d") for d in part.index], unit="%")],
            rationale=f"The lowest change, {values[low]:.6f}%, is in {labels[low]}.",
            metadata={"record_ids": sorted({f"{d.year // 10 * 10}s" for d in part.index})},
        ))
    return items
