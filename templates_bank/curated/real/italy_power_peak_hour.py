"""At which hour does an ItalyPowerDemand day reach its peak demand."""


def question(num_samples):
    rec = handler.records()
    ids = rec["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 100 * num_samples:
        tries += 1
        rid = str(ids[int(rng.integers(len(ids)))])
        demand = handler.series(rid)["demand"].to_numpy(dtype=float)
        order = np.argsort(-demand, kind="stable")
        top = int(order[0])
        if demand[top] - demand[int(order[1])] < 0.08:
            continue
        # distractors: the other positive local peaks first, then the highest hours at least 2 h from every option
        local = [h for h in range(24) if h != top and demand[h] > 0 and (h == 0 or demand[h] >= demand[h - 1])
                 and (h == 23 or demand[h] >= demand[h + 1])]
        local = sorted(local, key=lambda h: -demand[h])
        wrong = []
        for h in local + [int(h) for h in order[1:]]:
            if all(abs(h - o) >= 2 for o in [top] + wrong):
                wrong.append(h)
            if len(wrong) == 3:
                break
        items.append(mc_item(
            "This is one day of Italian electricity demand, one value per hour (hour 0 to 23), z-normalised so only "
            "the daily shape is kept. At which hour is demand highest?",
            f"hour {top}", [f"hour {h}" for h in wrong],
            series=[series(demand, name="demand", timestamps=[str(h) for h in range(24)], unit="z-score")],
            rationale=(f"The maximum is {demand[top]:.3f} at hour {top}; the next highest hour is {int(order[1])} with "
                       f"{demand[int(order[1])]:.3f}. Distractor hours have "
                       + ", ".join(f"{demand[h]:.3f} (hour {h})" for h in wrong) + "."),
            metadata={"record_ids": [rid], "peak_hour": top},
        ))
    return items
