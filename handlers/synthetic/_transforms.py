"""Transforms for TSAQA-style transformation questions: pure functions, array in, array out.

Each works along the time axis (axis 0), so a (n, k) array is transformed column by column.
"""

from __future__ import annotations

import numpy as np
import pywt
from numpy.typing import ArrayLike


def first_difference(x: ArrayLike) -> np.ndarray:
    """`x[t] - x[t-1]`: one value shorter than `x`. A straight line becomes a constant."""
    return np.diff(np.asarray(x, dtype=float), axis=0)


def fourier_magnitude(x: ArrayLike) -> np.ndarray:
    """Amplitude spectrum `|rfft(x)|` without the DC (mean) term.

    Element i is frequency (i + 1) / n cycles per sample, i.e. period n / (i + 1) samples,
    for i = 0 .. n//2 - 1. A sine with period p (n/p a whole number) peaks at i = n/p - 1.
    """
    return np.abs(np.fft.rfft(np.asarray(x, dtype=float), axis=0))[1:]


def wavelet_approximation(x: ArrayLike, wavelet: str = "db4", level: int | None = None) -> np.ndarray:
    """The smooth part of `x`: its discrete wavelet decomposition (PyWavelets, `wavelet`, `level`)
    with every detail coefficient set to zero, reconstructed at the length of `x`.

    `level` defaults to 3, or less when `x` is too short for it; higher levels are smoother.
    """
    x = np.array(x, dtype=float)  # a writable copy: pywt refuses read-only buffers
    max_level = pywt.dwt_max_level(x.shape[0], pywt.Wavelet(wavelet).dec_len)
    level = min(3, max_level) if level is None else level
    if not 1 <= level <= max(max_level, 1):
        raise ValueError(f"level must be 1..{max(max_level, 1)} for {x.shape[0]} samples and {wavelet}")
    coeffs = pywt.wavedec(x, wavelet, level=level, axis=0)
    coeffs = [coeffs[0]] + [np.zeros_like(c) for c in coeffs[1:]]
    return pywt.waverec(coeffs, wavelet, axis=0)[: x.shape[0]]


def zscore(x: ArrayLike) -> np.ndarray:
    """`(x - mean) / std` (population std); a constant series becomes all zeros."""
    x = np.asarray(x, dtype=float)
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
