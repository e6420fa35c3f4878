"""Range (highest minus lowest) of Mauna Loa CO2 over a stretch of weeks, with the building blocks."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, "co2", min_length=20, max_length=52)
        if win is None:
            continue
        item = ask(channel_stat(win, "range"))
        if item is not None:
            items.append(item)
    return items
