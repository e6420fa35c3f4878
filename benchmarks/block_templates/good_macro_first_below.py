"""The first quarter of a stretch whose change was below a drawn threshold, with the blocks."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "consumption", min_length=12, max_length=30)
        if win is None:
            continue
        item = ask(first_day(win, below=draw_threshold(win)))
        if item is not None:
            items.append(item)
    return items
