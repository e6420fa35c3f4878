"""In which 2-s segment of a smart-watch recording is the strongest acceleration spike."""

AXES = ["acc_x", "acc_y", "acc_z"]
LABELS = ["0-2 s", "2-4 s", "4-6 s", "6-8 s", "8-10 s"]


def question(num_samples):
    rec = handler.records()
    rec = rec[rec["label"] != "standing"]
    ids = rec["record_id"].tolist()
    labels = rec["label"].tolist()
    pool = []
    for rid, label in zip(ids, labels):
        frame = handler.series(rid)
        acc = np.abs(frame[AXES].to_numpy(dtype=float))
        peak = acc.max(axis=1)
        seg = np.arange(len(peak)) * 5 // len(peak)
        k = int(np.argmax(peak))
        other = float(peak[seg != seg[k]].max())
        # the spike must beat every other segment's largest |value| by 10% and not sit on a segment edge
        edge = k % (len(peak) // 5) in (0, len(peak) // 5 - 1)
        if peak[k] >= 1.1 * other and not edge:
            pool.append({"rid": str(rid), "label": str(label), "frame": frame, "k": k, "seg": int(seg[k]),
                         "peak": float(peak[k]), "axis": AXES[int(np.argmax(acc[k]))], "other": other})
    items = []
    for _ in range(num_samples):
        case = pool[int(rng.integers(len(pool)))]
        frame = case["frame"]
        times = [f"{t:.1f}" for t in frame.index.to_numpy(dtype=float)]
        correct = LABELS[case["seg"]]
        wrong = [LABELS[int(j)] for j in rng.choice([j for j in range(5) if j != case["seg"]], size=3, replace=False)]
        doing = "playing badminton" if case["label"] == "badminton" else case["label"]
        items.append(mc_item(
            f"This is a 10-s smart-watch accelerometer recording at 10 Hz (axes acc_x, acc_y, acc_z, units not "
            f"documented, gravity removed) made while {doing}. In which 2-second segment does the largest absolute "
            "acceleration value on any axis occur?",
            correct, wrong,
            series=[series(frame[a].to_numpy(dtype=float), name=a, timestamps=times) for a in AXES],
            rationale=(f"The largest |acceleration| is {case['peak']:.2f} on {case['axis']} at "
                       f"{float(frame.index[case['k']]):.1f} s (segment {correct}); the largest |value| in any other "
                       f"segment is {case['other']:.2f}."),
            metadata={"record_ids": [case["rid"]], "peak_time_s": round(float(frame.index[case["k"]]), 1),
                      "segment": correct},
        ))
    return items
