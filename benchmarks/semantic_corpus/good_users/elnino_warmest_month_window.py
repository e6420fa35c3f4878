"""In which month of a stretch of 6 to 18 months was the El Nino region's sea surface temperature highest."""


def question(num_samples):
    years = sorted(handler.records()["record_id"].tolist())
    sst = pd.concat([handler.series(y) for y in years])["sst"]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        n = int(rng.integers(6, 19))
        start = int(rng.integers(0, len(sst) - n + 1))
        part = sst.iloc[start:start + n]
        values = part.to_numpy(dtype=float)
        names = [d.strftime("%B %Y") for d in part.index]
        top = int(np.argmax(values))
        if np.sum(values == values[top]) > 1:
            continue
        wrong = rng.choice([i for i in range(n) if i != top], size=3, replace=False)
        items.append(mc_item(
            f"Monthly mean sea surface temperature (°C) of the Nino 1+2 region of the Pacific, {names[0]} to "
            f"{names[-1]}. In which month of this stretch was it highest?",
            names[top], [names[int(i)] for i in wrong],
            series=[series(values, name="sst", timestamps=[d.strftime("%Y-%m-%d") for d in part.index], unit="°C")],
            rationale=f"{names[top]} has the highest value, {values[top]:.2f} °C.",
            metadata={"record_ids": sorted({str(d.year) for d in part.index})},
        ))
    return items
