"""Estimate the mean heart rate of an ECG stretch (beats found in the data, checked against the labels).

The handler's 30 windows are consecutive 10-s pieces of one 5-min excerpt; beats are found on
the whole excerpt and kept in the windows where they match the labels. A stretch of 6-10 s starts on a 0.1-s grid anywhere
in the excerpt, inside a run of checked windows, and the shown stretches start in the checked
windows in a shuffled cycle, so one run covers them all. The question does not say where the
stretch lies: its start time let a solver recall the rate of overlapping stretches keyed before
(the excerpt holds only 5 minutes), and the rate drifts from about 115 to 100 bpm over the first
minute. The options are the rates (whole bpm, at least 3 apart) of four stretches of one length,
the shown one and three random ones: the distractors follow the key's own distribution, so no
rank or typical value gives it away. (Record 208's rate varies little, so the options are close:
the series must be read.)"""

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
    blocked = np.zeros(len(x) + gap, dtype=bool)  # within `gap` of a chosen peak
    for i in order:
        i = int(i)
        if not blocked[i]:
            chosen.append(i)
            blocked[max(0, i - gap + 1):i + gap] = True
    half = int(0.06 * FS)
    found = []
    for i in chosen:
        lo = max(0, i - half)
        found.append(lo + int(np.argmax(np.abs(hp[lo:i + half]))))
    return np.array(sorted(set(found)), dtype=int)


def checked_recording():
    """The excerpt as one recording: (samples, times, R-peak indices, checked). Beats are found
    on the whole recording (found per window, a beat on a window's edge was found in both), and
    `checked` marks the samples of windows whose beats agree with the handler's labels (count,
    min and max RR) and have no long gap."""
    rows = list(handler.records().sort_values("start_s").itertuples(index=False))
    frames = [handler.series(row.record_id) for row in rows]
    x = np.concatenate([f["ecg_mv"].to_numpy(dtype=float) for f in frames])
    t = np.concatenate([f.index.to_numpy(dtype=float) for f in frames])
    peaks = r_peaks(x)
    checked = np.zeros(len(x), dtype=bool)
    offset = 0
    for row, frame in zip(rows, frames):
        inside = peaks[(peaks >= offset) & (peaks < offset + len(frame))]
        rr = np.diff(inside) * 1000.0 / FS
        checked[offset:offset + len(frame)] = (
            row.max_gap_s < 1.5 and len(inside) == int(row.n_beats) and len(inside) >= 3
            and abs(rr.max() - row.max_rr_ms) <= 15 and abs(rr.min() - row.min_rr_ms) <= 15)
        offset += len(frame)
    return x, t, peaks, checked


def window_ids(times):
    """The handler's record ids (10-s windows) a stretch with these sample times touches."""
    return [f"w{k:02d}" for k in sorted({int(v // 10) for v in (times[0], times[-1])})]


def draw(recording, length, window_start=None):
    """A stretch of `length` s starting on the 0.1-s grid (in the 10-s window starting at sample
    `window_start`, or anywhere) and lying in checked windows, with at least 4 beats:
    (start, stop, R-peaks inside, heart rate in bpm), or None."""
    x, t, peaks, checked = recording
    for _ in range(100):
        if window_start is None:
            start = int(rng.integers(0, len(x) // (FS // 10))) * (FS // 10)
        else:
            start = window_start + int(rng.integers(0, 100)) * (FS // 10)
        stop = start + length * FS
        if stop > len(x) or not checked[start:stop].all():
            continue
        inside = peaks[(peaks >= start) & (peaks < stop)]
        if len(inside) >= 4:
            return start, stop, inside, 60000.0 / np.mean(np.diff(inside) * 1000.0 / FS)
    return None


def question(num_samples):
    recording = checked_recording()
    x, t_all, checked = recording[0], recording[1], recording[3]
    windows = [k for k in range(0, len(x), 10 * FS) if checked[k]]
    cycle = [windows[int(i)] for i in rng.permutation(len(windows))]
    items = []
    tries = 0
    while len(items) < num_samples and tries < 500 * num_samples:
        tries += 1
        # the shown stretch and three random ones of one length whose rates (whole bpm) lie at
        # least 3 bpm apart, the shown one at a uniformly drawn place among them
        length = int(rng.integers(6, 11))
        quad = [draw(recording, length, cycle[len(items) % len(cycle)])] + [draw(recording, length) for _ in range(3)]
        if any(q is None for q in quad):
            continue
        rates = sorted(int(round(q[3])) for q in quad)
        if min(np.diff(rates)) < 3 or any(abs(q[3] - round(q[3])) > 0.35 for q in quad):
            continue
        start, stop, inside, bpm = quad[0]
        key = int(round(bpm))
        rr = np.diff(inside) * 1000.0 / FS
        t = t_all[start:stop]
        rr_text = ", ".join(f"{v:.0f}" for v in rr)
        items.append(mc_item(
            f"This is {length} s of single-lead ECG (lead MLII, mV, 360 samples per second) "
            "of an MIT-BIH Arrhythmia Database recording. What is the average heart rate over this stretch, to the "
            "nearest beat per minute?",
            f"{key} beats per minute", [f"{r} beats per minute" for r in rates if r != key],
            series=[series(x[start:stop], name="ECG lead MLII", unit="mV")],
            context="Heart rate = 60000 / mean RR interval (ms), where RR intervals are the gaps between consecutive R-peaks.",
            rationale=(f"{len(inside)} R-peaks detected in the stretch; RR intervals (ms): {rr_text}; "
                       f"mean RR {np.mean(rr):.1f} ms gives {bpm:.1f} bpm. The other options are the rates of other "
                       "random stretches of the same length, at least 3 bpm away."),
            metadata={"record_ids": window_ids(t), "start_s": round(float(t[0]), 3), "length_s": length,
                      "n_beats": int(len(inside)), "heart_rate_bpm": round(float(bpm), 2)},
        ))
    return items
