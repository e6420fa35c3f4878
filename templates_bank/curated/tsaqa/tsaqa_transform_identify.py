"""TSAQA transformation (MC): which transformation turns series A into series B.

A is a raw (not normalised) seasonal series with a trend, level 20 to 100; B is one of four transforms of
A, drawn uniformly: first difference, Fourier amplitude spectrum, db4 level-3 wavelet approximation, or
z-score normalisation. The options are the four transforms (the same space every time). Every B has
exactly as many samples as A (the difference starts with a 0, the spectrum is the full two-sided one
with the DC bin set to 0), so the sample count tells nothing: only B's shape does.
"""

NAMES = {
    "first_difference": "first difference: B[0] = 0, then B[t] = A[t] - A[t - 1]",
    "fourier_magnitude": "Fourier amplitude spectrum: B[k] = |DFT(A)[k]| for all k, with B[0] (the DC term) set to 0",
    "wavelet_approximation": "wavelet approximation: A smoothed by dropping the fine wavelet details (db4, level 3)",
    "zscore": "z-score normalisation: B = (A - mean(A)) / std(A)",
}
ORDER = ["first_difference", "fourier_magnitude", "wavelet_approximation", "zscore"]


def apply(name, x):
    if name == "first_difference":
        return np.concatenate([[0.0], synth.first_difference(x)])
    if name == "fourier_magnitude":
        spectrum = np.abs(np.fft.fft(x))
        spectrum[0] = 0.0
        return spectrum
    if name == "wavelet_approximation":
        return synth.wavelet_approximation(x)
    return synth.zscore(x)


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = 2 * int(rng.integers(32, 101))
        season = synth.seasonality(rng, n, kind="fixed", noise=float(rng.uniform(0.3, 0.8)))
        trend = synth.linear(rng, n, slope=float(rng.choice([-1, 1]) * rng.uniform(0.02, 0.08)), intercept=0.0)
        made = synth.add(season, trend)
        a = np.array(made.values)  # a writable copy: pywt refuses the generator's read-only arrays
        name = ORDER[int(rng.integers(4))]
        b = apply(name, a)
        items.append(mc_item(
            f"Series A ({n} samples) is a raw measurement series. Series B (also {n} samples) was computed from A "
            "by one transformation. Which transformation was it?",
            NAMES[name], [NAMES[o] for o in ORDER if o != name],
            series=[series(a, name="A"), series(b, name="B")],
            rationale=(f"A = seasonality(kind='fixed', period {season.labels['period']:g}, level "
                       f"{season.labels['level']:.1f}) + linear trend (slope {trend.labels['slope']:.3f}); "
                       f"B = {name}(A), {len(b)} samples long."),
            metadata={"n": n, "transform": name, "length_b": len(b), "a_labels": made.labels},
        ))
    return items
