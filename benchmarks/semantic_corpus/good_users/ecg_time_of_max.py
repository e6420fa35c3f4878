"""At what time of a 1.5- to 3-second ECG stretch is the signal at its highest (times in seconds)."""


def fmt(t):
    return f"{t:.3f} s"


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        ecg = handler.series(rid)["ecg_mv"]
        n = int(rng.integers(540, 1081))
        a = int(rng.integers(0, len(ecg) - n + 1))
        part = ecg.iloc[a:a + n]
        values = part.to_numpy(dtype=float)
        top = int(np.argmax(values))
        if np.count_nonzero(values == values[top]) > 1:
            continue
        times = part.index.to_numpy(dtype=float)
        far = [i for i in range(n) if abs(times[i] - times[top]) >= 0.1]
        wrong = rng.choice(far, size=3, replace=False)
        items.append(mc_item(
            f"Single-lead ECG (mV) sampled at 360 Hz from {fmt(times[0])} to {fmt(times[-1])} (seconds from the start "
            "of the recording). At what time does the signal reach its highest value?",
            fmt(times[top]), [fmt(times[int(i)]) for i in wrong],
            series=[series(values, name="ecg_mv", timestamps=[f"{t:.6f}" for t in times], unit="mV")],
            rationale=f"The maximum, {values[top]:.3f} mV, is at {fmt(times[top])}.",
            metadata={"record_ids": [rid]},
        ))
    return items
