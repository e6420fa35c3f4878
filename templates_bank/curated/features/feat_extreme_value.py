"""Arithmetic reasoning (Fons et al.): what is the maximum (or minimum) value of the series? The
series comes from a univariate feature generator; the options form an evenly spaced ladder
around the true extreme (spacing at least 0.1 and 4-10% of the range), so the answer's rank
among the options is uniform."""

GENERATORS = ["trend", "seasonality", "anomaly", "structural_break", "stationarity"]


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    for _ in range(num_samples):
        name = GENERATORS[int(rng.integers(len(GENERATORS)))]
        n = int(rng.integers(max(60, synth.MIN_LENGTH[name]), 151))
        made = synth.GENERATORS[name](rng, n)
        vals = np.round(np.asarray(made.values), 2)
        dates = daily_dates(n)
        want_max = rng.random() < 0.5
        target = float(np.max(vals)) if want_max else float(np.min(vals))
        step = round(max(0.1, float(rng.uniform(0.04, 0.1)) * float(np.max(vals) - np.min(vals))), 2)
        rank = int(rng.integers(4))
        ladder = [round(target + (i - rank) * step, 2) for i in range(4)]
        wrong = [v for i, v in enumerate(ladder) if i != rank]
        word = "maximum (highest)" if want_max else "minimum (lowest)"
        items.append(mc_item(
            f"This daily series runs from {dates[0]} to {dates[-1]}. What is its {word} value?",
            f"{target:.2f}", [f"{v:.2f}" for v in wrong],
            series=[series(vals, name="value", timestamps=dates)],
            rationale=(f"The {word.split()[0]} of the {n} values is {target:.2f}, on "
                       f"{dates[int(np.argmax(vals) if want_max else np.argmin(vals))]}. Distractors are spaced by "
                       f"{step:.2f} around it. Series built with synth.{name}(kind='{made.labels['kind']}')."),
            metadata={"generator": name, "length": n, "labels": dict(made.labels),
                      "extreme": "max" if want_max else "min",
                      "value": target, "step": step},
        ))
    return items
