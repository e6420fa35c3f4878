"""FLAW: the total precipitation of a stretch, with the key moved to another option whenever the total
is above 20 mm (a bug on some items only)."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "precipitation", min_length=7, max_length=21)
        if win is None:
            continue
        total = channel_stat(win, "sum")
        item = ask(total)
        if item is not None:
            if total.value > 20:
                item["answer_index"] = (item["answer_index"] + 1) % len(item["options"])
            items.append(item)
    return items
