"""True/false (Fons et al. volatility sub-kinds): is the volatility clustering asymmetric (leverage
effect: turbulence after falls, hardly after rises)? Bound to synth.volatility: kind "leverage"
(GJR-GARCH) versus "clustered" (symmetric GARCH). Paths are redrawn until the property is
visible: after the 30% largest moves, the next day's mean squared return is at least 2 times
larger after falls than after rises (leverage), or within a factor 1.25 either way (symmetric)."""

CLAIMS = [
    ("In these daily returns, volatility flares up after large falls much more than after large rises "
     "(a leverage effect).", True),
    ("Big drops in this series are followed by more turbulence than big gains are.", True),
    ("In these daily returns, volatility responds about equally to large falls and large rises (no leverage "
     "effect).", False),
    ("Big gains and big drops in this series are followed by similar turbulence; the volatility clustering is "
     "symmetric.", False),
]


def after_ratio(r):
    """Mean squared next-day return after the 30% largest falls over the same after the 30% largest rises."""
    prev = r[:-1]
    nxt = r[1:] ** 2
    big = np.abs(prev) > np.quantile(np.abs(prev), 0.7)
    return float(np.mean(nxt[big & (prev < 0)]) / np.mean(nxt[big & (prev > 0)]))


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(220, 301))
        kind = "leverage" if rng.random() < 0.5 else "clustered"
        for _ in range(100):
            made = synth.volatility(rng, n, kind=kind)
            ratio = after_ratio(np.asarray(made.values))
            if (kind == "leverage" and ratio >= 2.0) or (kind == "clustered" and 1 / 1.25 <= ratio <= 1.25):
                break
        labels = dict(made.labels)
        claim, claims_leverage = CLAIMS[int(rng.integers(len(CLAIMS)))]
        asymmetric = kind == "leverage"
        if asymmetric:
            why = (f"GJR-GARCH(1,1) with alpha {labels['alpha']:.2f}, gamma {labels['gamma']:.2f} (extra variance "
                   f"only after negative returns), beta {labels['beta']:.2f}")
        else:
            why = f"symmetric GARCH(1,1) with alpha {labels['alpha']:.2f}, beta {labels['beta']:.2f}"
        items.append(tf_item(
            f"{claim} ({n} daily returns, in percent.)",
            asymmetric == claims_leverage,
            series=[series(np.round(made.values, 3), name="return", unit="%")],
            rationale=(f"Built with synth.volatility(kind='{kind}'): {why}; after the 30% largest moves the next "
                       f"day's mean squared return is {ratio:.2f} times larger after falls than after rises. The "
                       f"statement is {'true' if asymmetric == claims_leverage else 'false'}."),
            metadata={"generator": "volatility", "length": n, "labels": labels, "after_fall_ratio": ratio,
                      "claims_leverage": claims_leverage},
        ))
    return items
