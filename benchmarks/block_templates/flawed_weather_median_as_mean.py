"""FLAW: asks for the mean of a stretch of daily maxima, keys its median (the mean's question and call
are written onto the median's item)."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "temp_max", min_length=7, max_length=21)
        if win is None:
            continue
        mean = channel_stat(win, "mean")
        item = ask(channel_stat(win, "median"))
        if item is not None:
            item["question"] = mean.question
            item["metadata"]["block_call"] = mean.call
            items.append(item)
    return items
