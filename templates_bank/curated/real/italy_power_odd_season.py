"""Three ItalyPowerDemand days share a half of the year; pick the day from the other half."""

HALVES = {1: "October-March", 2: "April-September"}


CONTEXT = ("In the cold half of the year (October to March) early darkness adds a lighting peak: the evening "
           "maximum (17-20 h) rises above the daytime plateau (maximum over 9-15 h). In the warm half the daytime "
           "plateau is higher than the evening maximum.")


# (evening hours, daytime hours) windows: CONTEXT's own and the readings of it one hour wider or narrower
READINGS = [((17, 21), (9, 16)), ((18, 21), (9, 16)), ((17, 22), (9, 16)), ((16, 21), (9, 16)), ((17, 20), (9, 16)),
            ((17, 21), (10, 16)), ((17, 21), (9, 15)), ((17, 21), (8, 16))]


def follows_context(profile, label):
    """Whether the day shows its half's shape as CONTEXT states it by at least 0.2 z under every
    reading of the hours in READINGS, and on the windows' mean demand too (with CONTEXT's
    windows and a 0.1-z margin only, ~9% of the asked days flipped under a reading one hour off)."""
    sign = 1.0 if label == 1 else -1.0
    leads = [float(np.max(profile[e0:e1]) - np.max(profile[d0:d1])) for (e0, e1), (d0, d1) in READINGS]
    mean_lead = float(np.mean(profile[17:21]) - np.mean(profile[9:16]))
    return min(sign * v for v in leads) >= 0.2 and sign * mean_lead >= 0.2


def nearest_training_label(profiles, split, labels):
    """Each day's label by its nearest training day (1-NN, squared distance)."""
    train = np.flatnonzero(split == "train")
    dist = ((profiles[:, None, :] - profiles[None, train, :]) ** 2).sum(axis=2)
    return labels[train][np.argmin(dist, axis=1)]


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    labels = rec["label"].to_numpy(dtype=int)
    split = rec["split"].to_numpy()
    profiles = np.array([handler.series(r)["demand"].to_numpy(dtype=float) for r in ids])
    cent = {c: np.mean(profiles[(split == "train") & (labels == c)], axis=0) for c in (1, 2)}
    d1 = ((profiles - cent[1]) ** 2).sum(axis=1)
    d2 = ((profiles - cent[2]) ** 2).sum(axis=1)
    margin = np.where(labels == 1, d2 - d1, d1 - d2)
    nearest = nearest_training_label(profiles, split, labels)
    # the context's rule must hold for every shown day (it contradicted ~15% of the labels otherwise)
    pools = {c: [i for i in range(len(ids)) if split[i] == "test" and labels[i] == c and margin[i] >= 2.0
                 and nearest[i] == c
                 and follows_context(profiles[i], c)] for c in (1, 2)}
    names = ["Day A", "Day B", "Day C", "Day D"]
    items = []
    for _ in range(num_samples):
        odd = int(rng.integers(1, 3))
        common = 3 - odd
        chosen = [int(i) for i in rng.choice(pools[common], size=3, replace=False)]
        chosen.append(int(pools[odd][int(rng.integers(len(pools[odd])))]))
        order = rng.permutation(4)
        days = [chosen[int(j)] for j in order]
        key = int(np.flatnonzero(order == 3)[0])
        items.append(mc_item(
            "These are four days of Italian electricity demand, one value per hour (hour 0 to 23), each z-normalised "
            "so only the daily shape is kept. Three days come from the same half of the year (October-March or "
            "April-September) and one from the other half. Which day is the odd one out?",
            names[key], [n for j, n in enumerate(names) if j != key],
            series=[series(profiles[i], name=names[j], timestamps=[str(h) for h in range(24)], unit="z-score")
                    for j, i in enumerate(days)],
            context=CONTEXT,
            rationale=(f"{names[key]} ({ids[days[key]]}) is labelled {odd} ({HALVES[odd]}); the other three ("
                       + ", ".join(ids[days[j]] for j in range(4) if j != key)
                       + f") are labelled {common} ({HALVES[common]})."),
            metadata={"record_ids": [ids[i] for i in days], "labels": [int(labels[i]) for i in days],
                      "odd_label": odd},
        ))
    return items
