"""FLAW: counts the days above a drawn threshold plus 2 degrees, while the question (edited after the
block call) prints the drawn threshold. The replay does not vouch for an edited question: it goes to
the solver model and the audit."""


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
        item = ask(count_beyond(win, above=t + 2))
        if item is not None:
            item["question"] = count_beyond(win, above=t).question
            items.append(item)
    return items
