"""On which day does the 7-day mean of precipitation peak within a month?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        rain = frame["precipitation"]
        weekly = rain.rolling(7).mean().dropna()
        if weekly.max() <= 0:
            continue
        vals = weekly.to_numpy(dtype=float)
        order = np.argsort(-vals)
        if vals[order[0]] - vals[order[1]] < 0.2:
            continue
        dates = list(weekly.index.strftime("%Y-%m-%d"))
        best = int(order[0])
        wrong = [dates[int(j)] for j in rng.permutation(len(dates)) if abs(int(j) - best) >= 2][:3]
        shown = rain.loc[weekly.index].to_numpy(dtype=float)
        items.append(mc_item(
            f"The series is the 7-day trailing mean of daily precipitation in Seattle (mm/day), {dates[0]} to "
            f"{dates[-1]}. On which day is it highest?",
            dates[best], wrong,
            series=[series(shown, name="precipitation 7-day mean", timestamps=dates, unit="mm/day")],
            rationale=f"The 7-day mean peaks at {vals[best]:.2f} mm/day on {dates[best]}.",
            metadata={"record_ids": [rid]},
        ))
    return items
