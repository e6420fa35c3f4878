"""How many days of a stretch had a maximum temperature above a threshold drawn for each item (blocks)."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "temp_max")
        if win is None:
            continue
        t = draw_threshold(win)
        item = ask(count_beyond(win, above=t))
        if item is not None:
            items.append(item)
    return items
