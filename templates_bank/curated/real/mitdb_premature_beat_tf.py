"""True/false: does a run of consecutive MIT-BIH beats contain the premature beat?"""


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
        has_it = bool(rng.integers(2))
        k = int(rng.integers(4, 9))
        if has_it:
            # the premature beat with at least two beats before it and one after it
            lo = int(rng.integers(max(0, anomalous + 2 - k), anomalous - 1))
            hi = min(last, lo + k - 1)
            if hi < anomalous + 1:
                continue
        else:
            # only beats well before the premature one (its segment's neighbours are left out)
            lo = int(rng.integers(0, anomalous - 1 - k))
            hi = lo + k - 1
        part = beats.iloc[lo:hi + 1]
        if bool((part["label"] == 1).any()) != has_it:
            continue
        rr = part["rr_next_ms"].to_numpy(dtype=float)[:-1]
        values, times = stretch(part)
        rr_text = ", ".join(f"{v:.0f}" for v in rr)
        verdict = "one beat (labelled anomalous) arrives early" if has_it else "no beat is labelled anomalous"
        items.append(tf_item(
            f"This single-lead ECG (mV, 360 Hz) covers {times[0]:.2f} s to {times[-1] + 1 / 360:.2f} s of an MIT-BIH "
            f"Arrhythmia Database excerpt and holds {len(part)} consecutive beats. True or false: one of these beats "
            "is premature (it arrives clearly earlier than the rhythm predicts and is followed by a longer pause).",
            has_it,
            series=[series(values, name="ECG", timestamps=[f"{v:.3f}" for v in times], unit="mV")],
            rationale=f"RR intervals between the beats shown (ms): {rr_text}; {verdict}.",
            metadata={"record_ids": [str(r) for r in part["record_id"]], "contains_premature": has_it},
        ))
    return items
