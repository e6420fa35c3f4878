"""The highest value of a 3-month trailing mean of airline passengers, shown as a derived series."""


def question(num_samples):
    years = sorted(handler.records()["record_id"])
    monthly = pd.concat([handler.series(y) for y in years])["passengers"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        length = int(rng.integers(12, 37))
        start = int(rng.integers(0, len(monthly) - length + 1))
        part = monthly.iloc[start:start + length]
        smooth = part.rolling(3).median().dropna()
        peak = float(smooth.max())
        spread = max(4.0, float(smooth.std()) / 3)
        try:
            key, wrong = numeric_options(peak, spread=spread, decimals=1, unit="thousand")
        except ValueError:
            continue
        stamps = [d.strftime("%Y-%m-%d") for d in part.index]
        items.append(mc_item(
            f"The first series is the monthly number of international airline passengers (thousands) from "
            f"{part.index[0]:%B %Y} to {part.index[-1]:%B %Y}. The second is its 3-month trailing mean (each "
            "month's value is the mean of that month and the two months before it), from the third month on. "
            "What is the highest value of the 3-month trailing mean?",
            key, wrong,
            series=[series(part.to_numpy(), name="passengers", timestamps=stamps, unit="thousand passengers"),
                    series(smooth.to_numpy(), name="passengers 3-month mean", timestamps=stamps[2:],
                           unit="thousand passengers", derived="3-month trailing median of passengers")],
            rationale=f"The 3-month mean peaks at {peak:.2f} thousand in {smooth.idxmax():%B %Y}.",
            metadata={"record_ids": sorted({str(d.year) for d in part.index})},
        ))
    return items
