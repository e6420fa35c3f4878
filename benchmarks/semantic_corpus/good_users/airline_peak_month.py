"""Which month of a year carried the most airline passengers (options: month names)."""

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]


def question(num_samples):
    years = list(handler.records()["record_id"])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        year = years[int(rng.integers(len(years)))]
        frame = handler.series(year)
        values = frame["passengers"].to_numpy(dtype=float)
        order = np.argsort(-values, kind="stable")
        if values[order[0]] == values[order[1]]:
            continue  # two months share the peak: no single answer
        best = int(order[0])
        # the runners-up are the hardest wrong answers
        wrong = [MONTH_NAMES[int(i)] for i in order[1:4]]
        items.append(mc_item(
            f"The series gives the monthly number of international airline passengers (thousands) in {year}. "
            "In which month of that year were there the most passengers?",
            MONTH_NAMES[best], wrong,
            series=[series(values, name="passengers", timestamps=[d.strftime("%Y-%m-%d") for d in frame.index],
                           unit="thousand passengers")],
            rationale=f"{MONTH_NAMES[best]} {year} had {values[best]:.0f} thousand passengers, the most of the year.",
            metadata={"record_ids": [year]},
        ))
    return items
