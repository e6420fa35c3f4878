"""The same calendar stretch (2 to 3 weeks) in each of the four years 2012-2015: which year was wettest?

Comparing one stretch of the calendar across years keeps the season out of the answer: each item
asks about different weeks, so which year wins changes from item to item."""


def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    whole = pd.concat([handler.series(r) for r in ids])
    years = [2012, 2013, 2014, 2015]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        # a start day of a non-leap year, then the same month and day in every year
        first = pd.Timestamp(year=2013, month=1, day=1) + pd.Timedelta(days=int(rng.integers(0, 365 - 21)))
        length = int(rng.integers(14, 22))
        parts = []
        for y in years:
            begin = pd.Timestamp(year=y, month=first.month, day=first.day)
            parts.append(whole.loc[begin:begin + pd.Timedelta(days=length - 1)])
        if len({len(p) for p in parts}) != 1:
            continue
        totals = [float(p["precipitation"].sum()) for p in parts]
        ranked = sorted(totals, reverse=True)
        if ranked[0] - ranked[1] < 4.0:
            continue
        best = years[int(np.argmax(totals))]
        label = parts[0].index[0].strftime("%d %B") + " to " + parts[0].index[-1].strftime("%d %B")
        shown = [series(p["precipitation"].to_numpy(dtype=float), name=f"precipitation {y}",
                        timestamps=list(p.index.strftime("%Y-%m-%d")), unit="mm")
                 for y, p in zip(years, parts)]
        items.append(mc_item(
            f"Each series is Seattle's daily precipitation (mm) from {label} of one year. In which year did the "
            "most precipitation fall over these days in total?",
            str(best), [str(y) for y in years if y != best],
            series=shown,
            rationale="Totals: " + "; ".join(f"{y}: {t:.1f} mm" for y, t in zip(years, totals)) + ".",
            metadata={"record_ids": sorted({d[:7] for p in parts for d in p.index.strftime("%Y-%m-%d")})},
        ))
    return items
