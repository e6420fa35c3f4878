"""Total precipitation of a stretch; the distractors are common unit slips (cm, inches, x10)."""


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
        if total < 5:
            continue
        wrong = [total / 10, total * 10, total / 25.4]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm), {dates[0]} to {dates[-1]}. What was the total, in mm?",
            f"{total:.2f} mm", [f"{w:.2f} mm" for w in wrong],
            series=[series(rain, name="precipitation", timestamps=dates, unit="mm")],
            rationale=f"The sum is {total:.2f} mm.",
            metadata={"record_ids": [rid]},
        ))
    return items
