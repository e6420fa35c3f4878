"""Information retrieval (Fons et al.): what is the series' value on a given date? The series comes
from one of the univariate feature generators (trend, seasonality, anomaly, structural break,
stationarity); the options are values of the same series on nearby dates, all distinct at two
decimals."""

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
        dates = daily_dates(n)
        key = int(rng.integers(n))
        chosen = [float(vals[key])]
        near = sorted(range(n), key=lambda i: (abs(i - key), float(rng.random())))
        wrong = []
        for i in near[1:]:
            v = float(vals[i])
            if all(abs(v - c) >= 0.05 for c in chosen):
                chosen.append(v)
                wrong.append(i)
            if len(wrong) == 3:
                break
        if len(wrong) < 3:
            continue
        items.append(mc_item(
            f"This daily series runs from {dates[0]} to {dates[-1]}. What is its value on {dates[key]}?",
            f"{vals[key]:.2f}", [f"{vals[i]:.2f}" for i in wrong],
            series=[series(vals, name="value", timestamps=dates)],
            rationale=(f"The value on {dates[key]} (index {key}) is {vals[key]:.2f}. Distractors are the values on "
                       "nearby dates: " + ", ".join(f"{vals[i]:.2f} on {dates[i]}" for i in wrong)
                       + f". Series built with synth.{name}(kind='{made.labels['kind']}')."),
            metadata={"generator": name, "length": n, "labels": dict(made.labels), "date": dates[key],
                      "value": float(vals[key])},
        ))
    return items
