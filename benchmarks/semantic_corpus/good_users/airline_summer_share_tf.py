"""True or false: the summer months (June to August) carried more than a given share of a year's passengers."""


def question(num_samples):
    rec = handler.records()
    items = []
    for attempt in range(100 * num_samples):
        if len(items) == num_samples:
            break
        row = rec.iloc[int(rng.integers(len(rec)))]
        year = row["record_id"]
        frame = handler.series(year)
        months = frame.index.month
        summer = float(frame["passengers"][(months >= 6) & (months <= 8)].sum())
        total = float(frame["passengers"].sum())
        share = 100 * summer / total
        claim = int(rng.integers(26, 34))  # a whole percentage
        if abs(share - claim) < 0.3:
            continue  # too close to call from a chart
        items.append(tf_item(
            f"The series is the monthly number of international airline passengers (thousands) in {year}. "
            f"True or false: June, July and August together carried more than {claim}% of that year's passengers.",
            share > claim,
            series=[series(frame["passengers"].to_numpy(), name="passengers",
                           timestamps=[d.strftime("%Y-%m-%d") for d in frame.index], unit="thousand passengers")],
            rationale=f"June-August: {summer:.0f} of {total:.0f} thousand = {share:.2f}%.",
            metadata={"record_ids": [year]},
        ))
    return items
