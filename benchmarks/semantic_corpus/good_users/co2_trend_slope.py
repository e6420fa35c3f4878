"""The trend of Mauna Loa CO2 over several years: the slope of a least-squares line, in ppm per year.

Written with care: the line is fitted to the measured weeks only (missing weeks are left out of the
series shown, not filled), time is counted in years of 365.25 days from the first week shown, and the
question says both. The options are at least 0.1 ppm/year apart, two decimals each."""


def question(num_samples):
    years = sorted(handler.records()["record_id"])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        span = int(rng.integers(3, 9))
        first = int(rng.integers(0, len(years) - span + 1))
        chosen = years[first:first + span]
        co2 = pd.concat([handler.series(y) for y in chosen])["co2"].dropna()
        t = (co2.index - co2.index[0]).days.to_numpy(dtype=float) / 365.25
        y = co2.to_numpy(dtype=float)
        slope = float(np.polyfit(t, y, 1)[0])
        try:
            key, wrong = numeric_options(slope, spread=0.25, decimals=2, unit="ppm/year", low=0.0)
        except ValueError:
            continue
        dates = [d.strftime("%Y-%m-%d") for d in co2.index]
        items.append(mc_item(
            f"The series is the weekly CO2 concentration (ppm) at Mauna Loa from {dates[0]} to {dates[-1]} "
            f"({chosen[0]} to {chosen[-1]}; weeks without a measurement are left out). A straight line is fitted "
            "by least squares to the values shown, with time in years (days since the first week / 365.25). "
            "What is the slope of that line?",
            key, wrong,
            series=[series(y, name="co2", timestamps=dates, unit="ppm")],
            rationale=f"Least-squares slope over {len(y)} weeks: {slope:.4f} ppm/year.",
            metadata={"record_ids": list(chosen)},
        ))
    return items
