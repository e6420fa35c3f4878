"""Template sources several test modules share (each is run in the sandbox by the tests that use it)."""

# the mean of a random window of a synthetic series, shown as the window (a solver re-derives it)
WINDOW_MEAN = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    while len(items) < num_samples:
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid).iloc[:, 0].dropna().to_numpy(dtype=float)
        start = int(rng.integers(0, max(1, len(values) - 40)))
        window = values[start:start + int(rng.integers(12, 25))]
        key, wrong = numeric_options(float(window.mean()), spread=float(rng.uniform(0.3, 1.0)), decimals=2)
        items.append(mc_item("What is the mean value of the series shown?", key, wrong,
                             series=[series(window, name="value")]))
    return items
'''

# the argmax of a short random walk; its metadata keys are not in sorted order (exports keep the
# template's order, so stored items must too)
ARGMAX = """
def question(num_samples):
    items = []
    for _ in range(num_samples):
        values = [round(float(v), 1) for v in rng.normal(size=8).cumsum()]
        top = max(range(8), key=lambda i: values[i])
        wrong = [i for i in range(8) if i != top][:3]
        items.append(mc_item("At which index is the series highest?", str(top), [str(i) for i in wrong],
                             series=[series(values, name="x")], rationale=f"argmax is {top}",
                             metadata={"spike_index": top, "answer_kind": "index"}))
    return items
"""
