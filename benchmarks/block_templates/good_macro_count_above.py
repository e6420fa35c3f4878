"""How many quarters of a stretch had a change above a threshold drawn for each item (six decimals), with
the blocks: the threshold is passed unrounded, as the quick start writes it."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        channel = ["gdp", "consumption", "investment"][int(rng.integers(3))]
        win = take_window(handler, ids[int(rng.integers(len(ids)))], channel, min_length=12, max_length=30)
        if win is None:
            continue
        t = draw_threshold(win)
        item = ask(count_beyond(win, above=t))
        if item is not None:
            items.append(item)
    return items
