"""Structural-break dating (seed 000 structural breaks, with a date index): around which date does
the series switch regime? Bound to synth.structural_break's break_index (a jump in level, a change
of slope or a change of variance); distractor dates lie at least 15% of the series away from it
and from each other."""

WHAT = {
    "level": "its mean level jumps to a new value",
    "trend": "its slope changes (the trend bends)",
    "variance": "the size of its fluctuations changes",
}


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
    kinds = list(WHAT)
    tries = 0
    while len(items) < num_samples and tries < 20 * num_samples:
        tries += 1
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(100, 241))
        made = synth.structural_break(rng, n, kind=kind)
        labels = dict(made.labels)
        b = int(labels["break_index"])
        dates = daily_dates(n)
        gap = int(0.15 * n)
        picked = pick_far(b, int(0.1 * n), int(0.9 * n), gap, 4)
        if picked is None:
            continue
        items.append(mc_item(
            f"These are daily observations from {dates[0]} to {dates[-1]}. At one point {WHAT[kind]} and stays "
            "that way. Around which date does this change happen?",
            dates[b], [dates[p] for p in picked[1:]],
            series=[series(np.round(made.values, 2), name="value", timestamps=dates)],
            rationale=(f"Built with synth.structural_break(kind='{kind}', break_index={b}): the new regime starts on "
                       f"{dates[b]}. Distractors are dates at least {gap} days from it and from each other."),
            metadata={"generator": "structural_break", "length": n, "labels": labels, "date": dates[b]},
        ))
    return items
