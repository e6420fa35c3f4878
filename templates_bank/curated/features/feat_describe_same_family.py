"""Description matching, inter-dataset style (Fons et al.): four descriptions of series from the same
feature family (trend, seasonality, anomalies or structural breaks) but different kinds, each
written from the labels of a series actually generated with that kind over the same dates,
level and noise (so no value range or level tells them apart). Which one describes the attached
series? Trend has three kinds, so its items have three options (declared in metadata)."""

FAMILIES = {
    "trend": ["up", "down", "none"],
    "seasonality": ["fixed", "varying_amplitude", "shifting", "multiple", "none"],
    "anomaly": ["spike", "level_shift", "step", "dropout", "contextual", "none"],
    "structural_break": ["level", "trend", "variance", "none"],
}
SHAPES = {"linear": "steady (linear)", "quadratic": "accelerating (quadratic)",
          "exponential": "accelerating (exponential)"}


def daily_dates(n):
    start = datetime.date(2015, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 3650)))
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def slope_word(s, scale):
    if abs(s) < 1e-9 * scale:
        return "flat"
    return "rising" if s > 0 else "falling"


def qualitative(labels, dates):
    fam, kind = labels["family"], labels["kind"]
    if fam == "trend":
        if kind == "none":
            return f"it has no trend, fluctuating around {labels['level']:.1f}"
        return (f"it shows a {SHAPES[labels['shape']]} {'upward' if kind == 'up' else 'downward'} trend, "
                f"{'rising' if kind == 'up' else 'falling'} by about {abs(labels['change']):.1f} over the period")
    if fam == "seasonality":
        if kind == "fixed":
            return (f"it repeats a fixed seasonal cycle of about {labels['period']:.0f} days with amplitude about "
                    f"{labels['amplitude']:.1f}")
        if kind == "varying_amplitude":
            return (f"it has a seasonal cycle of about {labels['period']:.0f} days whose amplitude "
                    f"{'grows' if labels['amplitude_trend'] == 'increasing' else 'shrinks'} from about "
                    f"{labels['amplitude_start']:.1f} to {labels['amplitude_end']:.1f}")
        if kind == "shifting":
            return (f"it has a seasonal cycle whose period drifts from about {labels['period_start']:.0f} to "
                    f"{labels['period_end']:.0f} days")
        if kind == "multiple":
            return ("it combines two seasonal cycles, of about " + " and ".join(f"{p:.0f}" for p in labels["periods"])
                    + " days")
        return f"it has no seasonality: irregular noise around {labels['level']:.1f}"
    if fam == "anomaly":
        idx = labels["anomaly_indices"]
        if kind == "spike":
            return (f"it stays near {labels['level']:.1f} except for {labels['count']} isolated spike"
                    f"{'s' if labels['count'] > 1 else ''}, on " + ", ".join(dates[i] for i in idx))
        if kind == "level_shift":
            return (f"its level shifts {'up' if labels['shift'] > 0 else 'down'} by about {abs(labels['shift']):.1f} "
                    f"on {dates[labels['start']]} and stays there")
        if kind == "step":
            return (f"it has a temporary plateau {'above' if labels['shift'] > 0 else 'below'} its usual level of "
                    f"{labels['level']:.1f} from {dates[labels['start']]} to {dates[labels['end'] - 1]}")
        if kind == "dropout":
            return (f"it stays near {labels['level']:.1f} but reads 0 from {dates[labels['start']]} to "
                    f"{dates[labels['end'] - 1]}")
        if kind == "contextual":
            return (f"it follows a regular cycle of about {labels['period']:.0f} days with one out-of-place reading on "
                    f"{dates[idx[0]]}")
        return f"it has no anomalies: ordinary noise around {labels['level']:.1f}"
    if kind == "level":
        return (f"its mean jumps from about {labels['level_before']:.1f} to {labels['level_after']:.1f} on "
                f"{dates[labels['break_index']]}")
    if kind == "trend":
        scale = abs(labels["slope_before"]) + abs(labels["slope_after"])
        return (f"its trend bends on {dates[labels['break_index']]}: {slope_word(labels['slope_before'], scale)} "
                f"before, {slope_word(labels['slope_after'], scale)} after")
    if kind == "variance":
        return (f"its fluctuations become {'larger' if labels['sigma_after'] > labels['sigma_before'] else 'smaller'} "
                f"on {dates[labels['break_index']]} (noise sd from about {labels['sigma_before']:.1f} to "
                f"{labels['sigma_after']:.1f}) around the same mean")
    return f"it keeps the same level (about {labels['level']:.1f}) and noise throughout, with no break"


def question(num_samples):
    items = []
    tries = 0
    fams = list(FAMILIES)
    while len(items) < num_samples and tries < 20 * num_samples:
        tries += 1
        fam = fams[int(rng.integers(len(fams)))]
        kinds = [FAMILIES[fam][int(i)] for i in rng.permutation(len(FAMILIES[fam]))][:4]
        n = int(rng.integers(100, 181))
        dates = daily_dates(n)
        texts = []
        made_all = []
        # one level and noise for all four series, so no number in a description (a level, a
        # value range) singles out the attached series: only the feature itself does
        level, noise = float(rng.uniform(20.0, 100.0)), float(rng.uniform(0.5, 2.0))
        for kind in kinds:
            made = synth.GENERATORS[fam](rng, n, kind=kind, level=level, noise=noise)
            vals = np.round(np.asarray(made.values), 2)
            made_all.append((vals, dict(made.labels)))
            texts.append(f"Daily series from {dates[0]} to {dates[-1]}: {qualitative(made.labels, dates)}.")
        if len(set(texts)) < len(texts):
            continue
        vals, labels = made_all[0]
        items.append(mc_item(
            "Which description matches the attached daily series?",
            texts[0], texts[1:],
            series=[series(vals, name="value", timestamps=dates)],
            rationale=(f"The series was built with synth.{fam}(kind='{kinds[0]}') and the keyed description written "
                       "from its labels; each distractor describes a series generated over the same dates with "
                       "another kind ("
                       + ", ".join(kinds[1:]) + ")."),
            metadata={"n_options": len(kinds), "generator": fam, "length": n, "labels": labels, "key": kinds[0],
                      "distractor_labels": [lab for _, lab in made_all[1:]]},
        ))
    return items
