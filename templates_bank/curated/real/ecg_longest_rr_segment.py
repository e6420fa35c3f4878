"""Which 2-s segment of an ECG window holds its longest (or shortest) RR interval."""

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
        want_longest = bool(rng.integers(2))
        peaks = win["peaks"]
        rr = np.diff(peaks) * 1000.0 / FS
        mids = (peaks[:-1] + peaks[1:]) / 2.0
        seg = (mids // (2 * FS)).astype(int)
        best = int(np.argmax(rr)) if want_longest else int(np.argmin(rr))
        others = rr[seg != seg[best]]
        if len(others) == 0:
            continue
        margin = 60.0 if want_longest else 40.0
        if want_longest and rr[best] - others.max() < margin:
            continue
        if not want_longest and others.min() - rr[best] < margin:
            continue
        pos = mids[best] / FS
        if min(abs(pos - 2 * k) for k in range(6)) < 0.2:
            continue
        t = win["t"]
        t0 = float(t[0])
        labels = [f"{t0 + 2 * k:.0f}-{t0 + 2 * k + 2:.0f} s" for k in range(5)]
        correct = labels[int(seg[best])]
        distractors = [lab for lab in labels if lab != correct]
        if rng.integers(2):
            drop = int(rng.integers(len(distractors)))
            distractors = distractors[:drop] + distractors[drop + 1:]
        word = "longest" if want_longest else "shortest"
        items.append(mc_item(
            f"This is a 10-s single-lead ECG window (lead MLII, mV, 360 Hz) from {t0:.0f} s to {t0 + 10:.0f} s of an "
            f"MIT-BIH Arrhythmia Database recording. In which 2-second segment does the {word} beat-to-beat (RR) "
            "interval lie? An interval belongs to the segment containing its midpoint (halfway between its two R-peaks).",
            correct, distractors,
            series=[series(win["x"], name="ECG lead MLII", timestamps=[f"{v:.3f}" for v in t], unit="mV")],
            rationale=(f"R-peaks detected at {', '.join(f'{t0 + p / FS:.2f}' for p in peaks)} s. The {word} RR interval is "
                       f"{rr[best]:.0f} ms, between the R-peaks at {t0 + peaks[best] / FS:.2f} s and "
                       f"{t0 + peaks[best + 1] / FS:.2f} s (midpoint {t0 + pos:.2f} s, segment {correct}); the {word} "
                       f"interval with its midpoint in any other segment is {others.max() if want_longest else others.min():.0f} ms."),
            metadata={"record_ids": [win["rid"]], "extreme": word, "rr_ms": round(float(rr[best]), 1),
                      "midpoint_s": round(t0 + float(pos), 3), "segment": correct},
        ))
    return items
