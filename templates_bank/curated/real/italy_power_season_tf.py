"""True/false: is an ItalyPowerDemand day from the October-March or the April-September half of the year."""

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
    # class centroids from the training split; only test days that sit clearly nearer their own centroid are asked
    cent = {c: np.mean(profiles[(split == "train") & (labels == c)], axis=0) for c in (1, 2)}
    d1 = ((profiles - cent[1]) ** 2).sum(axis=1)
    d2 = ((profiles - cent[2]) ** 2).sum(axis=1)
    margin = np.where(labels == 1, d2 - d1, d1 - d2)
    nearest = nearest_training_label(profiles, split, labels)
    # the context's rule must hold for every asked day (it contradicted ~15% of the labels otherwise)
    pools = {c: [i for i in range(len(ids)) if split[i] == "test" and labels[i] == c and margin[i] >= 1.0
                 and nearest[i] == c
                 and follows_context(profiles[i], c)] for c in (1, 2)}
    orders = {c: rng.permutation(len(pool)) for c, pool in pools.items()}  # no day repeats within a call
    used = {1: 0, 2: 0}
    items = []
    for _ in range(num_samples):
        # the claimed half and the truth are drawn independently (50/50), then a day of the half
        # they need: each wording is true half the time whatever the pools' sizes
        claim = int(rng.integers(1, 3))
        half = claim if rng.random() < 0.5 else 3 - claim
        i = int(pools[half][int(orders[half][used[half] % len(pools[half])])])
        used[half] += 1
        truth = int(labels[i])
        items.append(tf_item(
            "This is one day of Italian electricity demand, one value per hour (hour 0 to 23), z-normalised so only "
            f"the daily shape is kept. True or false: the day falls in the {HALVES[claim]} half of the year.",
            claim == truth,
            series=[series(profiles[i], name="demand", timestamps=[str(h) for h in range(24)], unit="z-score")],
            context=CONTEXT,
            rationale=(f"Record {ids[i]} is labelled {truth} ({HALVES[truth]}) in the archive. Its shape is nearer "
                       f"the {HALVES[truth]} training centroid: squared distance {d1[i]:.1f} to the October-March "
                       f"centroid and {d2[i]:.1f} to the April-September one."),
            metadata={"record_ids": [ids[i]], "label": truth, "claimed": claim},
        ))
    return items
