"""How many ECG samples of half a second to a second and a half are above a level given in mV.

The level is a sample value of the stretch rounded to two decimals (the signal has more), and the
samples are counted against that rounded level, the one the question prints."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        ecg = handler.series(rid)["ecg_mv"]
        n = int(rng.integers(180, 541))
        a = int(rng.integers(0, len(ecg) - n + 1))
        values = ecg.iloc[a:a + n].to_numpy(dtype=float)
        level = float(values[int(rng.integers(n))])
        count = int((values > level).sum())
        try:
            key, wrong = numeric_options(count, spread=max(3.0, n / 20), decimals=0, low=0, high=n, step=1)
        except ValueError:
            continue
        times = ecg.index[a:a + n].to_numpy(dtype=float)
        items.append(mc_item(
            f"Single-lead ECG (mV) sampled at 360 Hz from {times[0]:.3f} s to {times[-1]:.3f} s ({n} samples). How many "
            f"of these samples are above {level:.2f} mV?",
            key, wrong,
            series=[series(values, name="ecg_mv", timestamps=[f"{t:.6f}" for t in times], unit="mV")],
            rationale=f"{count} of the {n} samples exceed {level:.2f} mV.",
            metadata={"record_ids": [rid]},
        ))
    return items
