"""Which range contains the total precipitation of a stretch?"""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        frame = handler.series(rid)
        k = int(rng.integers(10, 20))
        a = int(rng.integers(0, len(frame) - k + 1))
        part = frame.iloc[a:a + k]
        total = float(part["precipitation"].sum())
        pos = int(rng.integers(4))
        base = int(total // 5) * 5 - 5 * pos
        if base < 0:
            continue
        bands = [(base + 5 * j, base + 5 * j + 10) for j in range(4)]
        dates = list(part.index.strftime("%Y-%m-%d"))
        items.append(mc_item(
            f"Daily precipitation in Seattle (mm) from {dates[0]} to {dates[-1]}. In which range does the total "
            "precipitation of these days lie?",
            f"{bands[pos][0]}-{bands[pos][1]} mm", [f"{b[0]}-{b[1]} mm" for j, b in enumerate(bands) if j != pos],
            series=[series(part["precipitation"].to_numpy(dtype=float), name="precipitation", timestamps=dates,
                           unit="mm")],
            rationale=f"The total is {total:.1f} mm.",
            metadata={"record_ids": [rid]},
        ))
    return items
