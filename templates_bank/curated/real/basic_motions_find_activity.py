"""Four smart-watch recordings, one per activity: which one was made during a named activity."""

ACTIVITIES = ["standing", "walking", "running", "badminton"]
NAMES = ["Recording A", "Recording B", "Recording C", "Recording D"]
AXES = ["acc_x", "acc_y", "acc_z"]


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    labels = rec["label"].tolist()
    by_label = {a: [str(r) for r, lab in zip(ids, labels) if lab == a] for a in ACTIVITIES}
    items = []
    for _ in range(num_samples):
        order = [ACTIVITIES[int(j)] for j in rng.permutation(4)]
        picked = [by_label[a][int(rng.integers(len(by_label[a])))] for a in order]
        target = ACTIVITIES[int(rng.integers(4))]
        key = order.index(target)
        channels = []
        for name, rid in zip(NAMES, picked):
            frame = handler.series(rid)
            times = [f"{t:.1f}" for t in frame.index.to_numpy(dtype=float)]
            for axis in AXES:
                channels.append(series(frame[axis].to_numpy(dtype=float), name=f"{name} {axis}", timestamps=times))
        items.append(mc_item(
            "These are four 10-s smart-watch accelerometer recordings at 10 Hz (axes acc_x, acc_y, acc_z, units not "
            "documented, gravity removed). Each was made during a different activity: standing, walking, running and "
            f"playing badminton. Which recording was made while {'playing badminton' if target == 'badminton' else target}?",
            NAMES[key], [n for n in NAMES if n != NAMES[key]],
            series=channels,
            context=("Standing is nearly flat; walking gives moderate regular swings; running gives large regular "
                     "swings at step rate; badminton gives large irregular bursts (strokes) between quieter moments."),
            rationale="Archive labels: " + ", ".join(f"{n} = {r} ({a})" for n, r, a in zip(NAMES, picked, order))
                      + f"; the {target} recording is {NAMES[key]}.",
            metadata={"record_ids": picked, "labels": order, "target": target},
        ))
    return items
