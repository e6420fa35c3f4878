"""Anomaly location (Fons et al. information retrieval on an anomaly): on which date does the single
spike occur? The series is synth.anomaly(kind="spike", count=1); the options are the spike's
date and three other dates of the same series."""


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def pick_far(anchor, lo, hi, gap, count):
    """`anchor` plus count - 1 other indices in [lo, hi), all at least `gap` apart."""
    for _ in range(200):
        picked = [anchor]
        for cand in rng.permutation(np.arange(lo, hi)):
            if all(abs(int(cand) - p) >= gap for p in picked):
                picked.append(int(cand))
            if len(picked) == count:
                return picked
    return None


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(60, 181))
        made = synth.anomaly(rng, n, kind="spike", count=1)
        labels = dict(made.labels)
        where = int(labels["anomaly_indices"][0])
        dates = daily_dates(n)
        picked = pick_far(where, 2, n - 2, 5, 4)
        up = labels["magnitudes"][0] > 0
        items.append(mc_item(
            f"These are daily readings from {dates[0]} to {dates[-1]}. On one day the reading jumps far "
            f"{'above' if up else 'below'} its neighbours and returns to normal the next day. On which date "
            "does this spike occur?",
            dates[where], [dates[p] for p in picked[1:]],
            series=[series(np.round(made.values, 2), name="value", timestamps=dates)],
            rationale=(f"Built with synth.anomaly(kind='spike', count=1): index {where} ({dates[where]}) is moved by "
                       f"{labels['magnitudes'][0]:+.2f} ({abs(labels['magnitudes'][0]) / labels['noise']:.0f} "
                       "noise sd). "
                       "The distractors are other dates of the same series, at least 5 days away."),
            metadata={"generator": "anomaly", "length": n, "labels": labels, "date": dates[where]},
        ))
    return items
