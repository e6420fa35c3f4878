"""True/false: is an ItalyPowerDemand day from the October-March or the April-September half of the year."""

HALVES = {1: "October-March", 2: "April-September"}


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
    pool = [i for i in range(len(ids)) if split[i] == "test" and margin[i] >= 1.0]
    items = []
    for _ in range(num_samples):
        i = int(pool[int(rng.integers(len(pool)))])
        claim = int(rng.integers(1, 3))
        truth = int(labels[i])
        items.append(tf_item(
            "This is one day of Italian electricity demand, one value per hour (hour 0 to 23), z-normalised so only "
            f"the daily shape is kept. True or false: the day falls in the {HALVES[claim]} half of the year.",
            claim == truth,
            series=[series(profiles[i], name="demand", timestamps=[str(h) for h in range(24)], unit="z-score")],
            context=("In the cold half of the year (October to March) early darkness adds a strong lighting peak at "
                     "about 18-19 h; in the warm half the daytime plateau dominates and the evening peak is weak."),
            rationale=(f"Record {ids[i]} is labelled {truth} ({HALVES[truth]}) in the archive. Its shape is nearer "
                       f"the {HALVES[truth]} training centroid: squared distance {d1[i]:.1f} to the October-March "
                       f"centroid and {d2[i]:.1f} to the April-September one."),
            metadata={"record_ids": [ids[i]], "label": truth, "claimed": claim},
        ))
    return items
