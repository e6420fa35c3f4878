"""Pick out the premature beat (or the beat after the compensatory pause) in a run of MIT-BIH beats."""


def stretch(beats):
    """Consecutive beat segments joined into one ECG trace: (values, times)."""
    frames = [handler.series(rid) for rid in beats["record_id"]]
    values = np.concatenate([f["ecg_mv"].to_numpy(dtype=float) for f in frames])
    times = np.concatenate([f.index.to_numpy(dtype=float) for f in frames])
    return values, times


def question(num_samples):
    beats = handler.records().sort_values("beat").reset_index(drop=True)
    anomalous = int(beats.index[beats["label"] == 1][0])
    last = len(beats) - 1
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        after_pause = bool(rng.integers(2))
        k = int(rng.integers(5, 9))
        # the stretch holds the two beats before the premature one, the premature beat and the one after it
        lo_min = max(0, anomalous + 2 - k + 1)
        lo_max = anomalous - 2
        if lo_max < lo_min:
            continue
        lo = int(rng.integers(lo_min, lo_max + 1))
        hi = min(last, lo + k - 1)
        if hi < anomalous + 1:
            continue
        part = beats.iloc[lo:hi + 1]
        if after_pause:
            rr_prev = part["rr_prev_ms"].to_numpy(dtype=float)
            key = int(np.nanargmax(rr_prev))
            others = np.delete(rr_prev, key)
            if np.nanmax(others) > rr_prev[key] - 80:
                continue
            ask = ("Which beat ends the longest pause, i.e. has the longest RR interval from the beat before it "
                   "(the compensatory pause that follows a premature beat)?")
            why = (f"the beat at {part['r_peak_s'].iloc[key]:.2f} s has the longest preceding RR interval, "
                   f"{rr_prev[key]:.0f} ms (next longest in the stretch {np.nanmax(others):.0f} ms)")
        else:
            key = anomalous - lo
            ask = ("Which beat is the premature (anomalous) beat, arriving early after the beat before it and "
                   "followed by a compensatory pause?")
            why = (f"the beat at {part['r_peak_s'].iloc[key]:.2f} s is the one labelled anomalous in the source file; "
                   f"its RR from the previous beat is {part['rr_prev_ms'].iloc[key]:.0f} ms and to the next "
                   f"{part['rr_next_ms'].iloc[key]:.0f} ms, against about 800-860 ms for the normal beats")
        peaks = part["r_peak_s"].to_numpy(dtype=float)
        labels = [f"the beat with its R-peak at {p:.2f} s" for p in peaks]
        pool = [j for j in range(len(labels)) if j != key]
        n_wrong = int(rng.integers(3, 5))
        wrong = [labels[int(j)] for j in rng.choice(pool, size=min(n_wrong, len(pool)), replace=False)]
        values, times = stretch(part)
        items.append(mc_item(
            f"This single-lead ECG (mV, 360 Hz) covers {times[0]:.2f} s to {times[-1] + 1 / 360:.2f} s of an MIT-BIH "
            f"Arrhythmia Database excerpt and holds {len(part)} consecutive beats. {ask}",
            labels[key], wrong,
            series=[series(values, name="ECG", timestamps=[f"{v:.3f}" for v in times], unit="mV")],
            context=f"R-peaks of the beats in this stretch are at {', '.join(f'{p:.2f}' for p in peaks)} s.",
            rationale=f"From the beat table: {why}.",
            metadata={"record_ids": [str(r) for r in part["record_id"]], "key_beat": str(part["record_id"].iloc[key]),
                      "question": "after_pause" if after_pause else "premature"},
        ))
    return items
