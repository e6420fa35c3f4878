"""Count the heartbeats in a stretch of ECG (beats found in the data, checked against the labels)."""

FS = 360


def r_peaks(x):
    """R-peak sample indices: peaks of the smoothed slope envelope, snapped to the largest deflection."""
    x = np.asarray(x, dtype=float)
    w = int(0.2 * FS)
    hp = x - np.convolve(x, np.ones(w) / w, mode="same")
    sm = np.convolve(hp, np.ones(5) / 5, mode="same")
    w2 = int(0.08 * FS)
    env = np.convolve(np.abs(np.gradient(sm)), np.ones(w2) / w2, mode="same")
    thr = 0.35 * np.percentile(env, 98)
    inner = env[1:-1]
    cand = np.flatnonzero((inner >= env[:-2]) & (inner > env[2:]) & (inner > thr)) + 1
    order = cand[np.argsort(-env[cand], kind="stable")]
    gap = int(0.3 * FS)
    chosen = []
    for i in order:
        i = int(i)
        if all(abs(i - j) >= gap for j in chosen):
            chosen.append(i)
    half = int(0.06 * FS)
    found = []
    for i in chosen:
        lo = max(0, i - half)
        found.append(lo + int(np.argmax(np.abs(hp[lo:i + half]))))
    return np.array(sorted(set(found)), dtype=int)


def checked_windows():
    """Windows whose detected beats agree with the handler's labels (count, min and max RR)."""
    out = []
    for row in handler.records().itertuples(index=False):
        if not row.max_gap_s < 1.5:
            continue
        frame = handler.series(row.record_id)
        x = frame["ecg_mv"].to_numpy(dtype=float)
        peaks = r_peaks(x)
        if len(peaks) != int(row.n_beats) or len(peaks) < 3:
            continue
        rr = np.diff(peaks) * 1000.0 / FS
        if abs(rr.max() - row.max_rr_ms) > 15 or abs(rr.min() - row.min_rr_ms) > 15:
            continue
        out.append({"rid": row.record_id, "x": x, "t": frame.index.to_numpy(dtype=float), "peaks": peaks})
    return out


def question(num_samples):
    windows = checked_windows()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        win = windows[int(rng.integers(len(windows)))]
        length = int(rng.choice([5, 6, 8, 10]))
        start = int(rng.integers(0, (10 - length) * 2 + 1)) * FS // 2
        stop = start + length * FS
        peaks = win["peaks"]
        near_edge = np.abs(peaks - start) < 0.15 * FS
        near_edge = near_edge | (np.abs(peaks - stop) < 0.15 * FS)
        if near_edge.any():
            continue
        inside = peaks[(peaks >= start) & (peaks < stop)]
        n = int(len(inside))
        offsets = [-4, -2, 2, 4]
        picked = rng.choice(len(offsets), size=3, replace=False)
        distractors = [str(n + offsets[int(k)]) for k in picked]
        t = win["t"][start:stop]
        times = ", ".join(f"{win['t'][p]:.2f}" for p in inside)
        items.append(mc_item(
            f"This is {length} s of single-lead ECG (lead MLII, mV, 360 Hz) from {t[0]:.1f} s to {t[-1] + 1.0 / FS:.1f} s "
            "of an MIT-BIH Arrhythmia Database recording. How many heartbeats (QRS complexes, normal or premature) "
            "does it contain?",
            str(n), distractors,
            series=[series(win["x"][start:stop], name="ECG lead MLII", timestamps=[f"{v:.3f}" for v in t], unit="mV")],
            rationale=(f"{n} R-peaks detected in the stretch, at "
                       f"{times} s; none lies within 0.15 s of either edge."),
            metadata={"record_ids": [win["rid"]], "start_s": round(float(t[0]), 3), "length_s": length, "n_beats": n},
        ))
    return items
