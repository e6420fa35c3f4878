"""In which calendar month does Mauna Loa CO2 reach its seasonal peak in a given year.

Written with care, since the weekly data has gaps and weeks straddle month ends:
- a week belongs to the month of the Saturday that ends it (the handler's timestamp), so a month has
  four or five weeks and a year 52 or 53;
- a month's value is the mean of its measured weeks, and a year is asked only when every month has at
  least three measured weeks (1958 starts in March, 1964 misses 21 weeks);
- the monthly means are shown as a derived series next to the weekly values, and the question says how
  they were made;
- a year whose two highest monthly means are equal to 0.01 ppm is skipped (no single answer);
- the wrong options are three other months drawn at random from the rest of the year."""

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def monthly_means(weekly):
    """The mean of each calendar month's measured weeks, or None when a month has fewer than three."""
    measured = weekly.dropna()
    counts = measured.groupby(measured.index.month).count()
    if len(counts) < 12 or counts.min() < 3:
        return None
    return measured.groupby(measured.index.month).mean()


def question(num_samples):
    years = sorted(handler.records()["record_id"])
    usable = {}
    for year in years:
        weekly = handler.series(year)["co2"]
        means = monthly_means(weekly)
        if means is None:
            continue
        top_two = np.sort(means.to_numpy())[-2:]
        if round(float(top_two[1]), 2) == round(float(top_two[0]), 2):
            continue
        usable[year] = (weekly.dropna(), means)
    choices = sorted(usable)
    items = []
    while len(items) < num_samples and choices:
        year = choices[int(rng.integers(len(choices)))]
        weekly, means = usable[year]
        peak = int(means.idxmax())  # 1..12
        others = [m for m in range(1, 13) if m != peak]
        wrong = [MONTHS[int(m) - 1] for m in rng.choice(others, size=3, replace=False)]
        month_days = [f"{year}-{m:02d}-01" for m in means.index]
        items.append(mc_item(
            f"The first series is the weekly CO2 concentration (ppm) at Mauna Loa in {year}, each week dated by the "
            "Saturday that ends it (weeks without a measurement are left out). The second gives, for each calendar "
            "month, the mean of the weekly values dated in that month. In which month is this monthly mean highest?",
            MONTHS[peak - 1], wrong,
            series=[series(weekly.to_numpy(), name="co2", timestamps=[d.strftime("%Y-%m-%d") for d in weekly.index],
                           unit="ppm"),
                    series(means.to_numpy(), name="co2 monthly mean", timestamps=month_days, unit="ppm",
                           derived="monthly mean of the weekly co2 (resampled by month, mean)")],
            rationale=f"The monthly means peak in {MONTHS[peak - 1]} {year} at {means.max():.2f} ppm.",
            metadata={"record_ids": [year]},
        ))
    return items
