"""Peak-to-peak range of one to three seconds of ECG, with the building blocks."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "ecg_mv", min_length=360, max_length=1080)
        if win is None:
            continue
        item = ask(channel_stat(win, "range"))
        if item is not None:
            items.append(item)
    return items
