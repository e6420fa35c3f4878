"""About how much precipitation fell over a stretch (options in whole mm)."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 25))
        a = int(rng.integers(0, len(frame) - k + 1))
        rain = frame["precipitation"].to_numpy(dtype=float)[a:a + k]
        total = float(rain.sum())
        if total < 20:
            continue
        approx = int(5 * round(total / 5))
        wrong = []
        for d in rng.permutation([-9, -7, -4, -3, 3, 4, 7, 9]):
            v = approx + int(d)
            if v % 5 != 0 and v > 0:
                wrong.append(v)
            if len(wrong) == 3:
                break
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) from {dates[0]} to {dates[-1]}. About how much fell in total?",
            f"{approx} mm", [f"{v} mm" for v in wrong],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"The total is {total:.1f} mm, about {approx} mm.",
            metadata={"record_ids": [rid]},
        ))
    return items
