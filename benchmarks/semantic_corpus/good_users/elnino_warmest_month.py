"""In which month of a year was the El Nino region's sea surface temperature highest (month names)."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def question(num_samples):
    years = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        year = years[int(rng.integers(len(years)))]
        sst = handler.series(year)["sst"].to_numpy(dtype=float)
        warmest = int(np.argmax(sst))
        if np.sum(sst == sst[warmest]) > 1:
            continue
        wrong = rng.choice([m for m in range(12) if m != warmest], size=3, replace=False)
        items.append(mc_item(
            f"Monthly mean sea surface temperature (°C) of the Nino 1+2 region of the Pacific in {year}. In which "
            "month was it highest?",
            MONTHS[warmest], [MONTHS[int(m)] for m in wrong],
            series=[series(sst, name="sst", timestamps=[f"{year}-{m:02d}-01" for m in range(1, 13)], unit="°C")],
            rationale=f"{MONTHS[warmest]} has the highest value, {sst[warmest]:.2f} °C.",
            metadata={"record_ids": [year]},
        ))
    return items
