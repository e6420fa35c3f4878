"""Dynamic conditional correlation dating: around which date does the correlation between x and
y switch? Bound to synth.dcc_pair's change_index (positive <-> negative switches, so the change is
visible); distractor dates lie at least 15% of the series away from it and from each other."""


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
    tries = 0
    while len(items) < num_samples and tries < 20 * num_samples:
        tries += 1
        n = int(rng.integers(160, 261))
        kind = "positive_to_negative" if rng.random() < 0.5 else "negative_to_positive"
        made = synth.dcc_pair(rng, n, kind=kind)
        labels = dict(made.labels)
        c = int(labels["change_index"])
        dates = daily_dates(n)
        gap = int(0.15 * n)
        picked = pick_far(c, int(0.1 * n), int(0.9 * n), gap, 4)
        if picked is None:
            continue
        vals = np.round(made.values, 2)
        first, second = ("together", "in opposite directions") if kind == "positive_to_negative" else (
            "in opposite directions", "together")
        items.append(mc_item(
            f"x and y are daily series from {dates[0]} to {dates[-1]}. At first they tend to move {first}; later "
            f"they move {second}. Around which date does the relationship switch?",
            dates[c], [dates[p] for p in picked[1:]],
            series=[series(vals[:, 0], name="x", timestamps=dates), series(vals[:, 1], name="y", timestamps=dates)],
            rationale=(f"Built with synth.dcc_pair(kind='{kind}'): correlation {labels['rho_before']:+.2f} before "
                       f"{dates[c]} (index {c}) and {labels['rho_after']:+.2f} from then on. Distractors are dates at "
                       f"least {gap} days from it and from each other."),
            metadata={"generator": "dcc_pair", "length": n, "labels": labels, "date": dates[c]},
        ))
    return items
