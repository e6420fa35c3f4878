"""Count the heartbeats in a stretch of ECG (beats found in the data, checked against the labels).

Stretches of 3-9 s start anywhere on a 0.1-s grid of the checked 10-s windows (thousands of
distinct stretches). Four random stretches of random lengths with four different counts are
drawn and one of them, chosen uniformly, is shown: the distractors come from the key's own
distribution, so neither a count's rank nor its typical size gives the key away."""

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


def stretch(win, length_s, start_tenths):
    """(start sample, stop sample, beats inside) of a stretch, or None when a beat lies within
    0.15 s of an edge (its count would be ambiguous)."""
    start = start_tenths * FS // 10
    stop = start + length_s * FS
    peaks = win["peaks"]
    if (np.abs(peaks - start) < 0.15 * FS).any() or (np.abs(peaks - stop) < 0.15 * FS).any():
        return None
    return start, stop, int(np.count_nonzero((peaks >= start) & (peaks < stop)))


def draw(windows, length):
    """A random valid stretch of `length` s (start on a 0.1-s grid) of a random checked window."""
    for _ in range(100):
        win = windows[int(rng.integers(len(windows)))]
        got = stretch(win, length, int(rng.integers(0, (10 - length) * 10 + 1)))
        if got is not None:
            return (win, *got)
    return None


def question(num_samples):
    windows = checked_windows()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 500 * num_samples:
        tries += 1
        # four random stretches of 3 to 9 s whose counts all differ; the one shown is drawn uniformly
        # from them, so the distractors come from the key's own distribution. The question does not
        # state the length (the timestamps show it), so no text alone narrows the count down.
        quad = [draw(windows, int(rng.integers(3, 10))) for _ in range(4)]
        if any(q is None for q in quad) or len({q[3] for q in quad}) < 4:
            continue
        counts = [q[3] for q in quad]
        win, start, stop, n = quad[int(rng.integers(4))]
        length = (stop - start) // FS
        inside = win["peaks"][(win["peaks"] >= start) & (win["peaks"] < stop)]
        t = win["t"][start:stop]
        times = ", ".join(f"{win['t'][p]:.2f}" for p in inside)
        items.append(mc_item(
            "This is a stretch of single-lead ECG (lead MLII, mV, 360 samples per second) from an MIT-BIH "
            "Arrhythmia Database recording. How many heartbeats (QRS complexes, normal or premature) does it contain?",
            str(n), [str(c) for c in counts if c != n],
            series=[series(win["x"][start:stop], name="ECG lead MLII", unit="mV")],
            rationale=(f"{n} R-peaks detected in the stretch, at "
                       f"{times} s; none lies within 0.15 s of either edge of this {length}-s stretch. The other options "
                       "are the beat counts of other random stretches of the recording."),
            metadata={"record_ids": [win["rid"]], "start_s": round(float(t[0]), 3), "length_s": length, "n_beats": n},
        ))
    return items
