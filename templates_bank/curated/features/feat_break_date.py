"""Structural-break dating (Fons et al. structural breaks, with a date index): around which date does
the series switch regime? Bound to synth.structural_break's break_index (a jump in level, a change
of slope or a change of variance); the break and three distractor dates are four dates at least 12% of the
series apart within its middle 60%, the break being a uniformly drawn one of them."""

WHAT = {
    "level": "its mean level jumps to a new value",
    "trend": "its slope changes (the trend bends)",
    "variance": "the size of its fluctuations changes",
}


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def spread_positions(lo, hi, gap, count=4):
    """`count` sorted indices in [lo, hi], neighbours at least `gap` apart, uniform over all such sets."""
    slack = (hi - lo) - (count - 1) * gap
    offsets = np.sort(rng.integers(0, slack + 1, size=count))
    return [int(lo + o + i * gap) for i, o in enumerate(offsets)]


def question(num_samples):
    items = []
    kinds = list(WHAT)
    for _ in range(num_samples):
        kind = kinds[int(rng.integers(len(kinds)))]
        n = int(rng.integers(100, 241))
        gap = int(0.12 * n)
        # four candidate dates spread over the middle 60%; the break is one of them, drawn
        # uniformly, so its rank among the options and its distance to the centre say nothing
        picked = spread_positions(int(0.2 * n), int(0.8 * n), gap)
        b = picked.pop(int(rng.integers(len(picked))))
        made = synth.structural_break(rng, n, kind=kind, break_index=b)
        labels = dict(made.labels)
        dates = daily_dates(n)
        items.append(mc_item(
            f"These are daily observations from {dates[0]} to {dates[-1]}. At one point {WHAT[kind]} and stays "
            "that way. Around which date does this change happen?",
            dates[b], [dates[p] for p in picked],
            series=[series(np.round(made.values, 2), name="value", timestamps=dates)],
            rationale=(f"Built with synth.structural_break(kind='{kind}', break_index={b}): the new regime starts on "
                       f"{dates[b]}. Distractors are dates at least {gap} days from it and from each other (the break is a uniformly drawn one of four such dates)."),
            metadata={"generator": "structural_break", "length": n, "labels": labels, "date": dates[b]},
        ))
    return items
