"""FLAW: the question and series are those of one stretch, the key counts the stretch one quarter later
(the block's call and question are copied from the shown stretch)."""


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, "gdp", min_length=12, max_length=30)
        if win is None:
            continue
        later = take_window(handler, rid, "gdp", start=win.start + 1, length=len(win.values))
        if later is None:
            continue
        t = draw_threshold(win)
        shown = count_beyond(win, above=t)
        item = ask(count_beyond(later, above=t))
        if item is not None:
            item["question"], item["series"] = shown.question, shown.shown
            item["metadata"]["block_call"] = shown.call
            items.append(item)
    return items
