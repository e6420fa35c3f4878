"""Largest ECG amplitude in a 2 to 4 s stretch of one window; the options are the maxima of four
random stretches (at least 0.08 mV apart), one of them shown."""


def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    frames = {r: handler.series(r) for r in ids}
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        size = int(rng.integers(720, 1441))
        draws = []
        for _ in range(4):
            r = ids[int(rng.integers(len(ids)))]
            sig = frames[r]["ecg_mv"].to_numpy(dtype=float)
            s = int(rng.integers(0, len(sig) - size + 1))
            draws.append((r, s, sig[s:s + size], round(float(sig[s:s + size].max()), 2)))
        peaks = sorted(d[3] for d in draws)
        if min(np.diff(peaks)) < 0.08:
            continue
        r, s, part, peak = draws[int(rng.integers(4))]
        t = frames[r].index.to_numpy(dtype=float)[s:s + size]
        stamps = [f"{x:.4f}" for x in t]
        items.append(mc_item(
            f"A single-lead ECG (mV, 360 Hz) from {t[0]:.2f} s to {t[-1]:.2f} s of the recording. What is the "
            "largest value of the signal in this stretch, to two decimals?",
            f"{peak:.2f} mV", [f"{p:.2f} mV" for p in peaks if p != peak],
            series=[series(part, name="ecg_mv", timestamps=stamps, unit="mV")],
            rationale=f"The maximum of the {size} samples is {peak:.2f} mV.",
            metadata={"record_ids": [r], "start_s": float(t[0])},
        ))
    return items
