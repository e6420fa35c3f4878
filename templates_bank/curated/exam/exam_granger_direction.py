"""Which way does Granger causality run between two series (TimeSeriesExam causality). Every option
is a direction of `synth.granger_pair` (x->y, y->x, none); the keyed one generated the pair.
The series are shown under neutral names (A and B, in random roles)."""


def question(num_samples):
    items = []
    directions = ["x->y", "y->x", "none"]
    for _ in range(num_samples):
        n = int(rng.integers(150, 301))
        direction = directions[int(rng.integers(3))]
        made = synth.granger_pair(rng, n, direction=direction)
        labels = made.labels
        names = ["A", "B"] if rng.random() < 0.5 else ["B", "A"]  # names[0] shows x, names[1] shows y
        shown = {"x": names[0], "y": names[1]}
        texts = {
            "x->y": f"{shown['x']} Granger-causes {shown['y']}: past {shown['x']} helps predict {shown['y']}, not the reverse",
            "y->x": f"{shown['y']} Granger-causes {shown['x']}: past {shown['y']} helps predict {shown['x']}, not the reverse",
            "none": "Neither: the two series are independent, neither's past helps predict the other",
        }
        channels = [series(made.values[:, 0], name=f"series {names[0]}"),
                    series(made.values[:, 1], name=f"series {names[1]}")]
        if names[0] == "B":
            channels = channels[::-1]
        detail = ("two independent AR(1) series" if direction == "none" else
                  f"{shown[labels['effect']]}[t] depends on {shown[labels['cause']]}[t-{labels['lag']}] "
                  f"(coefficient {labels['coefficient']:.2f})")
        items.append(mc_item(
            f"Series A and series B are two synthetic daily series ({n} days). Which statement about Granger "
            "causality between them is correct?",
            texts[direction], [texts[d] for d in directions if d != direction],
            series=channels,
            rationale=f"Generated with synth.granger_pair(direction='{direction}'): {detail}.",
            metadata={"n_options": 3, "generator": "granger_pair", "direction": direction, "x_is": f"series {shown['x']}",
                      "y_is": f"series {shown['y']}", "length": n, "labels": labels},
        ))
    return items
