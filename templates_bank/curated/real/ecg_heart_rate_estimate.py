"""Estimate the mean heart rate of an ECG stretch (beats found in the data, checked against the labels).

Stretches of 6-10 s start anywhere on a 0.1-s grid of the checked windows. The options are the
rates (whole bpm, at least 3 apart) of four random stretches, one of them (drawn uniformly)
shown: the distractors follow the key's own distribution, so no rank or typical value gives it
away. (Record 208's rate varies little, so the options are close: the series must be read.)"""

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


def draw(windows):
    """A random stretch (6 to 10 s, start on a 0.1-s grid) of a random checked window with at least
    4 beats: (window, start, stop, R-peaks inside, heart rate in bpm)."""
    for _ in range(100):
        win = windows[int(rng.integers(len(windows)))]
        length = int(rng.integers(6, 11))
        start = int(rng.integers(0, (10 - length) * 10 + 1)) * FS // 10
        stop = start + length * FS
        inside = win["peaks"][(win["peaks"] >= start) & (win["peaks"] < stop)]
        if len(inside) >= 4:
            return win, start, stop, inside, 60000.0 / np.mean(np.diff(inside) * 1000.0 / FS)
    return None


def question(num_samples):
    windows = checked_windows()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 500 * num_samples:
        tries += 1
        # four random stretches whose rates (whole bpm) lie at least 3 bpm apart; the one shown is
        # drawn uniformly from them, so the distractors follow the key's own distribution
        quad = [draw(windows) for _ in range(4)]
        if any(q is None for q in quad):
            continue
        rates = sorted(int(round(q[4])) for q in quad)
        if min(np.diff(rates)) < 3 or any(abs(q[4] - round(q[4])) > 0.35 for q in quad):
            continue
        win, start, stop, inside, bpm = quad[int(rng.integers(4))]
        key = int(round(bpm))
        length = (stop - start) // FS
        rr = np.diff(inside) * 1000.0 / FS
        t = win["t"][start:stop]
        rr_text = ", ".join(f"{v:.0f}" for v in rr)
        items.append(mc_item(
            f"This is {length} s of single-lead ECG (lead MLII, mV, 360 samples per second, from {t[0]:.1f} s to "
            f"{t[-1] + 1.0 / FS:.1f} s) "
            "of an MIT-BIH Arrhythmia Database recording. What is the average heart rate over this stretch, to the "
            "nearest beat per minute?",
            f"{key} beats per minute", [f"{r} beats per minute" for r in rates if r != key],
            series=[series(win["x"][start:stop], name="ECG lead MLII", unit="mV")],
            context="Heart rate = 60000 / mean RR interval (ms), where RR intervals are the gaps between consecutive R-peaks.",
            rationale=(f"{len(inside)} R-peaks detected in the stretch; RR intervals (ms): {rr_text}; "
                       f"mean RR {np.mean(rr):.1f} ms gives {bpm:.1f} bpm. The other options are the rates of other "
                       "random stretches of the recording, at least 3 bpm away."),
            metadata={"record_ids": [win["rid"]], "start_s": round(float(t[0]), 3), "length_s": length,
                      "n_beats": int(len(inside)), "heart_rate_bpm": round(float(bpm), 2)},
        ))
    return items
