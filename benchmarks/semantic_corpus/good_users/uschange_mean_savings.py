"""The mean quarterly percentage change of US personal savings over a stretch of quarters."""


def q(d):
    return f"{d.year} Q{(d.month - 1) // 3 + 1}"


def question(num_samples):
    decades = sorted(handler.records()["record_id"])
    savings = pd.concat([handler.series(d) for d in decades])["savings"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        n = int(rng.integers(6, 21))
        start = int(rng.integers(0, len(savings) - n + 1))
        part = savings.iloc[start:start + n]
        mean = float(part.mean())
        try:
            key, wrong = numeric_options(mean, spread=max(1.0, float(part.std()) / 3), decimals=2, unit="%")
        except ValueError:
            continue
        items.append(mc_item(
            f"The series is the quarterly percentage change (%) of US personal savings from {q(part.index[0])} to "
            f"{q(part.index[-1])}. What is the mean of these {n} quarterly changes?",
            key, wrong,
            series=[series(part.to_numpy(), name="savings",
                           timestamps=[d.strftime("%Y-%m-%d") for d in part.index], unit="%")],
            rationale=f"The mean of the {n} values is {mean:.4f}%.",
            metadata={"record_ids": sorted({f"{d.year // 10 * 10}s" for d in part.index})},
        ))
    return items
