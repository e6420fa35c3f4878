"""Arithmetic reasoning (Fons et al.): on which date does the series reach its maximum (or minimum)?
The series comes from a univariate feature generator; the distractors are the dates of the next
most extreme values, each at least 3 days from the answer and from each other."""

GENERATORS = ["trend", "seasonality", "anomaly", "structural_break", "stationarity"]


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    tries = 0
    while len(items) < num_samples and tries < 20 * num_samples:
        tries += 1
        name = GENERATORS[int(rng.integers(len(GENERATORS)))]
        n = int(rng.integers(max(60, synth.MIN_LENGTH[name]), 151))
        made = synth.GENERATORS[name](rng, n)
        vals = np.round(np.asarray(made.values), 2)
        want_max = rng.random() < 0.5
        score = vals if want_max else -vals
        order = [int(i) for i in np.argsort(-score, kind="stable")]
        best = order[0]
        if score[order[1]] >= score[best]:
            continue
        picked = [best]
        for i in order[1:]:
            if all(abs(i - p) >= 3 for p in picked):
                picked.append(i)
            if len(picked) == 4:
                break
        if len(picked) < 4:
            continue
        dates = daily_dates(n)
        word = "highest" if want_max else "lowest"
        items.append(mc_item(
            f"This daily series runs from {dates[0]} to {dates[-1]}. On which date does it reach its {word} value?",
            dates[best], [dates[i] for i in picked[1:]],
            series=[series(vals, name="value", timestamps=dates)],
            rationale=(f"The {word} value is {vals[best]:.2f} on {dates[best]}. Distractors are the dates of the next "
                       f"most extreme values: " + ", ".join(f"{vals[i]:.2f} on {dates[i]}" for i in picked[1:])
                       + f". Series built with synth.{name}(kind='{made.labels['kind']}')."),
            metadata={"generator": name, "length": n, "labels": dict(made.labels),
                      "extreme": "max" if want_max else "min",
                      "date": dates[best], "value": float(vals[best])},
        ))
    return items
