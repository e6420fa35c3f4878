"""Which of four series has the lowest (or highest) signal-to-noise ratio (TimeSeriesExam noise
understanding). Each series is a sine cycle (`synth.sine`) plus white noise (`synth.white_noise`);
the keyed series gets a noise sd that puts its SNR far from the other three."""


def question(num_samples):
    items = []
    for _ in range(num_samples):
        n = int(rng.integers(100, 201))
        asks_noisiest = bool(rng.random() < 0.5)
        names = [f"series {k + 1}" for k in range(4)]
        keyed = int(rng.integers(4))
        channels = []
        truth = []
        for k in range(4):
            amplitude = float(rng.uniform(1.0, 10.0))
            if asks_noisiest:
                ratio = float(rng.uniform(0.9, 1.3)) if k == keyed else float(rng.uniform(0.08, 0.25))
            else:
                ratio = float(rng.uniform(0.03, 0.08)) if k == keyed else float(rng.uniform(0.4, 0.8))
            period = float(rng.integers(10, n // 4 + 1))
            made = synth.add(synth.sine(rng, n, period=period, amplitude=amplitude),
                             synth.white_noise(rng, n, sigma=ratio * amplitude, mean=float(rng.uniform(0.0, 50.0))))
            channels.append(series(made.values, name=names[k]))
            truth.append({"series": names[k], "amplitude": amplitude, "noise_sd": ratio * amplitude,
                          "period": period, "snr_amplitude_over_sd": 1.0 / ratio})
        wrong = [names[k] for k in range(4) if k != keyed]
        word = "noisiest, i.e. has the lowest" if asks_noisiest else "cleanest, i.e. has the highest"
        items.append(mc_item(
            f"Each of these four synthetic series ({n} samples) is a periodic signal plus random noise, with "
            f"different amplitudes. Which series is the {word} signal-to-noise ratio (signal amplitude "
            "relative to the noise)?",
            names[keyed], wrong,
            series=channels,
            rationale=(f"{names[keyed]} has signal amplitude / noise sd = {truth[keyed]['snr_amplitude_over_sd']:.1f}; "
                       "the others have " + ", ".join(f"{t['snr_amplitude_over_sd']:.1f}" for i, t in enumerate(truth) if i != keyed)
                       + " (sine amplitude over white-noise sd, as generated)."),
            metadata={"generator": "sine + white_noise", "asks": "lowest" if asks_noisiest else "highest",
                      "keyed": names[keyed], "series_truth": truth},
        ))
    return items
