"""Dynamic conditional correlation dating: around which date does the correlation between x and
y switch? Bound to synth.dcc_pair's change_index (positive <-> negative switches, so the change is
visible); the switch and three distractor dates are four dates at least 10% of the series apart
within its middle 40%, the switch being a uniformly drawn one of them."""


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
    for _ in range(num_samples):
        n = int(rng.integers(160, 261))
        kind = "positive_to_negative" if rng.random() < 0.5 else "negative_to_positive"
        gap = int(0.1 * n)
        # four candidate dates within the middle 40%; the switch is a uniformly drawn one of them
        picked = spread_positions(int(0.3 * n), int(0.7 * n), gap)
        c = picked.pop(int(rng.integers(len(picked))))
        made = synth.dcc_pair(rng, n, kind=kind, change_index=c)
        labels = dict(made.labels)
        dates = daily_dates(n)
        vals = np.round(made.values, 2)
        first, second = ("together", "in opposite directions") if kind == "positive_to_negative" else (
            "in opposite directions", "together")
        items.append(mc_item(
            f"x and y are daily series from {dates[0]} to {dates[-1]}. At first they tend to move {first}; later "
            f"they move {second}. Around which date does the relationship switch?",
            dates[c], [dates[p] for p in picked],
            series=[series(vals[:, 0], name="x", timestamps=dates), series(vals[:, 1], name="y", timestamps=dates)],
            rationale=(f"Built with synth.dcc_pair(kind='{kind}'): correlation {labels['rho_before']:+.2f} before "
                       f"{dates[c]} (index {c}) and {labels['rho_after']:+.2f} from then on. Distractors are dates at "
                       f"least {gap} days from it and from each other (the switch is a uniformly drawn one of four)."),
            metadata={"generator": "dcc_pair", "length": n, "labels": labels, "date": dates[c]},
        ))
    return items
