"""How much the annual mean CO2 at Mauna Loa rose between two years (mean of each year's measured weeks)."""


def weekly(year):
    co2 = handler.series(year)["co2"].dropna()
    return co2.to_numpy(dtype=float), [d.strftime("%Y-%m-%d") for d in co2.index]


def question(num_samples):
    rec = handler.records()
    years = [y for y, n in zip(rec["record_id"], rec["n_weeks"]) if n >= 52]  # 1958 starts in March
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        i = int(rng.integers(len(years) - 1))
        j = i + int(rng.integers(1, 9))
        if j >= len(years):
            continue
        first, second = years[i], years[j]
        a, dates_a = weekly(first)
        b, dates_b = weekly(second)
        diff = float(weekly(years[j - 1])[0].mean() - a.mean())
        try:
            key, wrong = numeric_options(diff, spread=0.6, decimals=2, unit="ppm")
        except ValueError:
            continue
        items.append(mc_item(
            f"The two series are the weekly CO2 concentrations (ppm) measured at Mauna Loa in {first} and in "
            f"{second} (weeks without a measurement are left out). Taking each year's mean over its measured "
            f"weeks, by how much did the mean of {second} exceed the mean of {first}?",
            key, wrong,
            series=[series(a, name=f"co2 {first}", timestamps=dates_a, unit="ppm"),
                    series(b, name=f"co2 {second}", timestamps=dates_b, unit="ppm")],
            rationale=f"Mean {second}: {b.mean():.3f} ppm over {len(b)} weeks; mean {first}: {a.mean():.3f} ppm over "
                      f"{len(a)} weeks; difference {diff:.3f} ppm.",
            metadata={"record_ids": [first, second]},
        ))
    return items
