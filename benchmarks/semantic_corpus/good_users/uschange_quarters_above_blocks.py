"""How many quarters of a stretch had a change above a threshold, with the building blocks.

The data has six decimals; the threshold is a value of the record rounded to two decimals before it is
used, so the number the question prints is the number counted against."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    channels = ["consumption", "income", "production"]
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, channels[int(rng.integers(len(channels)))], min_length=12, max_length=30)
        if win is None:
            continue
        t = round(draw_threshold(win), 2)
        item = ask(count_beyond(win, above=t))
        if item is not None:
            items.append(item)
    return items
