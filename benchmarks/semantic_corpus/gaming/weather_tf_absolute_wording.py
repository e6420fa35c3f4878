"""True or false statements about the daily minimum temperature of a stretch."""


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
        tmin = frame["temp_min"].to_numpy(dtype=float)[a:a + k]
        dates = list(frame.index.strftime("%Y-%m-%d"))[a:a + k]
        t = float(np.round(np.median(tmin)))
        if rng.random() < 0.5:
            if not (tmin > t).any():
                continue
            claim, truth = f"On at least one of these days the minimum was above {t:.0f} °C.", True
        else:
            if (tmin > t).all():
                continue
            claim, truth = f"On every one of these days the minimum was above {t:.0f} °C.", False
        items.append(tf_item(
            f"Daily minimum temperature in Seattle (°C) from {dates[0]} to {dates[-1]}. {claim}",
            truth,
            series=[series(tmin, name="temp_min", timestamps=dates, unit="°C")],
            rationale=f"The minima range from {tmin.min():.1f} to {tmin.max():.1f} °C.",
            metadata={"record_ids": [rid]},
        ))
    return items
