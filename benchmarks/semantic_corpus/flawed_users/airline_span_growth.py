"""Percentage change of the passengers carried over the same months of two years."""

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def question(num_samples):
    years = sorted(handler.records()["record_id"])
    items = []
    for _ in range(200 * num_samples):
        if len(items) >= num_samples:
            break
        a, b = sorted(rng.choice(len(years), size=2, replace=False))
        first, last = sorted(rng.choice(12, size=2, replace=False))
        year_a, year_b = years[int(a)], years[int(b)]
        part_a = handler.series(year_a)["passengers"].iloc[first:last + 1]
        part_b = handler.series(year_b)["passengers"].iloc[first:last + 1]
        total_a, total_b = float(part_a.sum()), float(handler.series(years[int(b) - 1])["passengers"].iloc[first:last + 1].sum())
        change = 100 * (total_b / total_a - 1)
        try:
            key, wrong = numeric_options(change, spread=max(3.0, change * 0.12), decimals=1, unit="%")
        except ValueError:
            continue
        span = f"{MONTHS[first]}-{MONTHS[last]}"
        items.append(mc_item(
            f"The two series are the monthly international airline passengers (thousands) from {MONTHS[first]} to "
            f"{MONTHS[last]} of {year_a} and of {year_b}. By what percentage did the total number of passengers "
            f"over these months change from {year_a} to {year_b}?",
            key, wrong,
            series=[series(part_a.to_numpy(), name=f"passengers {span} {year_a}",
                           timestamps=[d.strftime("%Y-%m-%d") for d in part_a.index], unit="thousand passengers"),
                    series(part_b.to_numpy(), name=f"passengers {span} {year_b}",
                           timestamps=[d.strftime("%Y-%m-%d") for d in part_b.index], unit="thousand passengers")],
            rationale=f"Totals {total_a:.0f} and {total_b:.0f} thousand: 100 * ({total_b:.0f} / {total_a:.0f} - 1) "
                      f"= {change:.2f}%.",
            metadata={"record_ids": [year_a, year_b]},
        ))
    return items
