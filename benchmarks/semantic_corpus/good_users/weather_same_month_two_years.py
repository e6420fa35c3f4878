"""How much warmer (mean daily maximum) one month was than the same month of another year."""

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]


def question(num_samples):
    rec = handler.records()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        month = int(rng.integers(1, 13))
        same = rec[rec["month"] == month]
        a, b = same.sample(2, random_state=int(rng.integers(1 << 31)))["record_id"].tolist()
        tmax_a = handler.series(a)["temp_max"]
        tmax_b = handler.series(b)["temp_max"]
        diff = float(tmax_b.mean() - tmax_a.mean())
        try:
            key, wrong = numeric_options(diff, spread=0.8, decimals=2, unit="°C")
        except ValueError:
            continue
        name = MONTH_NAMES[month - 1]
        items.append(mc_item(
            f"The two series are Seattle's daily maximum temperatures (°C) of {name} {a[:4]} and of {name} {b[:4]}. "
            f"By how much did the mean daily maximum of {name} {b[:4]} exceed that of {name} {a[:4]} (a negative "
            "value means it was lower)?",
            key, wrong,
            series=[series(tmax_a.to_numpy(), name=f"temp_max {a}", timestamps=list(tmax_a.index.strftime("%Y-%m-%d")),
                           unit="°C"),
                    series(tmax_b.to_numpy(), name=f"temp_max {b}", timestamps=list(tmax_b.index.strftime("%Y-%m-%d")),
                           unit="°C")],
            rationale=f"Means {tmax_b.mean():.3f} and {tmax_a.mean():.3f} °C: difference {diff:.3f} °C.",
            metadata={"record_ids": [a, b]},
        ))
    return items
