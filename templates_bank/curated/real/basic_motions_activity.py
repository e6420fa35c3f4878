"""Classify a 6-channel smart-watch recording as standing, walking, running or badminton."""

ACTIVITIES = ["standing", "walking", "running", "badminton"]
CHANNELS = ["acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z"]


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    labels = rec["label"].tolist()
    items = []
    for _ in range(num_samples):
        i = int(rng.integers(len(ids)))
        rid, label = str(ids[i]), str(labels[i])
        frame = handler.series(rid)
        times = [f"{t:.1f}" for t in frame.index.to_numpy(dtype=float)]
        sd = {c: float(np.std(frame[c].to_numpy(dtype=float), ddof=1)) for c in CHANNELS}
        items.append(mc_item(
            "This is a 10-s smart-watch recording at 10 Hz: 3-axis accelerometer (acc_x, acc_y, acc_z) and 3-axis "
            "gyroscope (gyr_x, gyr_y, gyr_z), units not documented, gravity removed. The wearer was standing, walking, "
            "running or playing badminton. Which activity is it?",
            label, [a for a in ACTIVITIES if a != label],
            series=[series(frame[c].to_numpy(dtype=float), name=c, timestamps=times) for c in CHANNELS],
            context=("Standing is nearly flat; walking gives moderate regular swings; running gives large regular "
                     "swings at step rate; badminton gives large irregular bursts (strokes) between quieter moments."),
            rationale=(f"Record {rid} is labelled '{label}' in the BasicMotions archive. Channel standard deviations: "
                       + ", ".join(f"{c} {v:.2f}" for c, v in sd.items()) + "."),
            metadata={"record_ids": [rid], "label": label},
        ))
    return items
