"""A regime change: two base patterns joined in time with `synth.concatenate`; which pattern comes
first and which second (TimeSeriesExam pattern recognition). The options are four different
ordered pairs of patterns drawn at random, the keyed one among them uniformly, so no option is a
reversed or half-swapped copy of the key (which would single it out)."""

NAMES = {
    "sine": "a sine wave",
    "square": "a square wave",
    "sawtooth": "a sawtooth wave",
    "linear": "a straight-line trend",
    "noise": "pure random noise",
}


def segment(kind, m):
    """One segment of `m` samples following `kind` (deterministic patterns get faint noise)."""
    level = float(rng.uniform(-10.0, 10.0))
    if kind == "noise":
        return synth.white_noise(rng, m, sigma=float(rng.uniform(1.0, 3.0)), mean=level)
    if kind == "linear":
        change = (1 if rng.random() < 0.5 else -1) * float(rng.uniform(5.0, 12.0))
        base = synth.linear(rng, m, slope=change / (m - 1), intercept=level)
        spread = abs(change)
    else:
        period = float(rng.integers(12, max(13, m // 4) + 1))
        amplitude = float(rng.uniform(2.0, 6.0))
        base = synth.GENERATORS[kind](rng, m, period=period, amplitude=amplitude)
        spread = 2 * amplitude
    return synth.add(base, synth.white_noise(rng, m, sigma=0.02 * spread, mean=level))


def phrase(first, second):
    return f"{NAMES[first][0].upper()}{NAMES[first][1:]}, then {NAMES[second]}"


def question(num_samples):
    items = []
    kinds = list(NAMES)
    for _ in range(num_samples):
        # four different ordered pairs of patterns, the key a uniformly drawn one of them: no option
        # is built from the key (a reversed or half-swapped copy would single it out)
        pairs = [(a, b) for a in kinds for b in kinds if a != b]
        chosen = [pairs[int(i)] for i in rng.choice(len(pairs), size=4, replace=False)]
        first, second = chosen[int(rng.integers(4))]
        m1 = int(rng.integers(60, 121))
        m2 = int(min(120, max(60, round(m1 * float(rng.uniform(0.7, 1.4))))))
        made = synth.concatenate(segment(first, m1), segment(second, m2))
        wrong = [phrase(a, b) for a, b in chosen if (a, b) != (first, second)]
        items.append(mc_item(
            f"This synthetic series ({m1 + m2} samples) switches regime once: it is two segments joined "
            "end to end, each following a single base pattern. Which describes the segments in time order?",
            phrase(first, second), wrong,
            series=[series(made.values, name="value")],
            rationale=(f"synth.concatenate of a {first} segment ({m1} samples) and a {second} segment "
                       f"({m2} samples); the switch is at index {m1}."),
            metadata={"generator": "concatenate", "first": first, "second": second, "boundary": m1,
                      "length": m1 + m2, "labels": made.labels},
        ))
    return items
