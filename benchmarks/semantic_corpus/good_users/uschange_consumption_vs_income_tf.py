"""True or false: over a stretch of quarters, consumption grew faster on average than disposable income."""


def label(d):
    return f"{d.year} Q{(d.month - 1) // 3 + 1}"


def question(num_samples):
    decades = sorted(handler.records()["record_id"])
    frame = pd.concat([handler.series(d) for d in decades])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        n = int(rng.integers(8, 21))
        start = int(rng.integers(0, len(frame) - n + 1))
        part = frame.iloc[start:start + n]
        cons = part["consumption"].to_numpy(dtype=float)
        inc = part["income"].to_numpy(dtype=float)
        gap = float(cons.mean() - inc.mean())
        if abs(gap) < 0.02:
            continue
        first, last = part.index[0], part.index[-1]
        stamps = [d.strftime("%Y-%m-%d") for d in part.index]
        items.append(tf_item(
            f"The two series are the quarterly percentage changes (%) of US real personal consumption and of real "
            f"personal disposable income from {label(first)} to {label(last)}. True or false: over these "
            f"{n} quarters, the mean quarterly change of consumption was larger than the mean quarterly change of "
            "income.",
            gap > 0,
            series=[series(cons, name="consumption", timestamps=stamps, unit="%"),
                    series(inc, name="income", timestamps=stamps, unit="%")],
            rationale=f"Mean consumption change {cons.mean():.4f}%, mean income change {inc.mean():.4f}%.",
            metadata={"record_ids": sorted({f"{d.year // 10 * 10}s" for d in part.index})},
        ))
    return items
