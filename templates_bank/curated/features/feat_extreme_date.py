"""Arithmetic reasoning (Fons et al.): on which date does the series reach its maximum (or minimum)?
The series comes from a univariate feature generator and is cut into four equal parts; the key is
the date of the overall extreme and each distractor the date of the most extreme value of another
part. Which part holds the key is drawn first (a quarter each) and series are drawn until one has
its extreme there, away from both ends: trends peak at an end, so otherwise the key would be the
earliest or the latest option date, or a date the question states."""

GENERATORS = ["trend", "seasonality", "anomaly", "structural_break", "stationarity"]


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def question(num_samples):
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        want_part = int(rng.integers(4))
        want_max = rng.random() < 0.5
        for _ in range(50):
            tries += 1
            name = GENERATORS[int(rng.integers(len(GENERATORS)))]
            n = int(rng.integers(max(60, synth.MIN_LENGTH[name]), 151))
            made = synth.GENERATORS[name](rng, n)
            vals = np.round(np.asarray(made.values), 2)
            score = vals if want_max else -vals
            bounds = [n * k // 4 for k in range(5)]
            parts = [int(bounds[k] + np.argmax(score[bounds[k]:bounds[k + 1]])) for k in range(4)]
            best = parts[want_part]
            unique = int(np.sum(score == score[best])) == 1
            if (unique and score[best] == score.max() and 3 <= best < n - 3
                    and all(abs(i - j) >= 3 for i in parts for j in parts if i < j)):
                break
        else:
            continue
        dates = daily_dates(n)
        word = "highest" if want_max else "lowest"
        others = [i for i in parts if i != best]
        items.append(mc_item(
            f"This daily series runs from {dates[0]} to {dates[-1]}. On which date does it reach its {word} value?",
            dates[best], [dates[i] for i in others],
            series=[series(vals, name="value", timestamps=dates)],
            rationale=(f"The {word} value is {vals[best]:.2f} on {dates[best]}. Distractors are the dates of the "
                       f"{word} values of the other quarters of the series: "
                       + ", ".join(f"{vals[i]:.2f} on {dates[i]}" for i in others)
                       + f". Series built with synth.{name}(kind='{made.labels['kind']}')."),
            metadata={"generator": name, "length": n, "labels": dict(made.labels),
                      "extreme": "max" if want_max else "min",
                      "date": dates[best], "value": float(vals[best])},
        ))
    return items
