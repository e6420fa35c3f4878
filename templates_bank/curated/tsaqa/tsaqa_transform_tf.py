"""TSAQA transformation (TF): is series B the stated transform of series A?

A is a z-scored trend plus seasonal cycle plus noise. The statement names one transform (first
difference, Fourier amplitude spectrum, or db4 level-3 wavelet approximation). True items: B is that
transform of A. False items, half each: B is the same transform of another series of the same kind whose
period and trend differ, or B is a different transform of A with the same length as the claimed one
(the sign-flipped difference, the squared spectrum, the time-reversed approximation); either way B is
at least half the true output's RMS away from it.
"""

NAMES = {
    "first_difference": "the first difference of A (B[t] = A[t + 1] - A[t])",
    "fourier_magnitude": "the Fourier amplitude spectrum of A (|DFT(A)| with the DC term dropped)",
    "wavelet_approximation": "the wavelet approximation of A (db4, level 3: the fine details removed)",
}
ORDER = ["first_difference", "fourier_magnitude", "wavelet_approximation"]
# a different transform of A with the same length as the claimed one
VARIANTS = {
    "first_difference": lambda d: -d,
    "fourier_magnitude": lambda f: f ** 2,
    "wavelet_approximation": lambda w: w[::-1],
}
VARIANT_NAMES = {
    "first_difference": "A[t] - A[t + 1] (the difference with its sign flipped)",
    "fourier_magnitude": "the power spectrum |DFT(A)|^2 (the squared amplitudes)",
    "wavelet_approximation": "the wavelet approximation of A reversed in time",
}


def apply(name, x):
    if name == "first_difference":
        return synth.first_difference(x)
    if name == "fourier_magnitude":
        return synth.fourier_magnitude(x)
    return synth.wavelet_approximation(x)


def make(n):
    period = float(rng.integers(8, n // 4 + 1))
    made = synth.add(synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(1.0, 3.0)) / n,
                                  intercept=0.0),
                     synth.sine(rng, n, period=period, amplitude=1.0),
                     synth.white_noise(rng, n, sigma=float(rng.uniform(0.05, 0.3))))
    return made, synth.zscore(made.values)


def rms(v):
    return float(np.sqrt(np.mean(np.asarray(v) ** 2)))


def question(num_samples):
    items = []
    while len(items) < num_samples:
        n = 2 * int(rng.integers(40, 101))
        made, a = make(n)
        claim = ORDER[int(rng.integers(3))]
        truth = bool(rng.random() < 0.5)
        case = "true"
        other_labels = None
        if truth:
            b = apply(claim, a)
            how = f"B = {claim}(A)"
        elif rng.random() < 0.5:
            case = "other_series"
            other, c = make(n)
            b = apply(claim, c)
            keyed_out = apply(claim, a)
            if rms(b - keyed_out) < 0.5 * rms(keyed_out):
                continue
            other_labels = other.labels
            how = f"B = {claim}(C) for another series C (period {other.labels['components'][1]['period']:g})"
        else:
            case = "other_transform"
            keyed_out = apply(claim, a)
            b = VARIANTS[claim](keyed_out)
            if rms(b - keyed_out) < 0.5 * rms(keyed_out):
                continue
            how = f"B = {VARIANT_NAMES[claim]}, not {claim}(A)"
        items.append(tf_item(
            f"Series A is a z-score normalised series of {n} samples; series B has {len(b)} samples. "
            f"True or false: B is {NAMES[claim]}.",
            truth,
            series=[series(a, name="A"), series(b, name="B")],
            rationale=f"{how}; so the statement is {truth}. A = zscore(linear trend + sine with period "
                      f"{made.labels['components'][1]['period']:g} + noise).",
            metadata={"n": n, "claimed_transform": claim, "case": case, "a_labels": made.labels,
                      "other_labels": other_labels},
        ))
    return items
