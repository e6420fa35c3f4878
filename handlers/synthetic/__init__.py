"""Synthetic time series with ground truth by construction (TimeSeriesExam and seed-000 styles).

Every generator is called as `name(rng, length=..., **params)` where `rng` is a
`numpy.random.Generator` or an int seed, and returns a `Synthetic`: `values` (shape (n,), or
(n, 2) with columns x, y for the `*_pair` generators) and `labels` (JSON-able ground truth:
`family`, `kind` and the generating parameters). Parameters left as None are drawn from `rng`
in ranges that make the property clearly visible; the same seed gives the same series.

- Base patterns (family "pattern"): linear, exponential, sine, sawtooth, square, ar, ma,
  white_noise, random_walk; combine them with add, multiply, concatenate.
- Feature families (pass `kind=`, or leave it None to draw one): trend, seasonality, anomaly,
  volatility, structural_break, stationarity, fat_tails, correlated_pair, lagged_pair,
  dcc_pair; granger_pair takes `direction=` instead.
- Transforms (array in, array out): first_difference, fourier_magnitude,
  wavelet_approximation, zscore.
- Registries: GENERATORS (name -> function), KINDS (name -> accepted kinds),
  MIN_LENGTH (name -> shortest accepted length), CHECKS (name -> realization check),
  UNCHECKED (name -> the generator without its realization check).

Labels hold in the sample: every stochastic feature generator (and ar, ma, white_noise,
random_walk) keeps a realization only when a textbook statistic of its values, computed
without the generator's code, shows the label with a margin (`_realization`); otherwise it
redraws from the same rng, so a seed still fixes the series. After MAX_DRAWS failed draws it
raises UnrealizedLabelError (given parameters too weak for the property to show).
"""

from itemsmith.handlers.synthetic._core import (
    CHECKS,
    GENERATORS,
    KINDS,
    MAX_DRAWS,
    MIN_LENGTH,
    UNCHECKED,
    Synthetic,
    UnrealizedLabelError,
)
from itemsmith.handlers.synthetic._multivariate import correlated_pair, dcc_pair, granger_pair, lagged_pair
from itemsmith.handlers.synthetic._operators import add, concatenate, multiply
from itemsmith.handlers.synthetic._patterns import (
    ar,
    exponential,
    linear,
    ma,
    random_walk,
    sawtooth,
    sine,
    square,
    white_noise,
)
from itemsmith.handlers.synthetic._transforms import first_difference, fourier_magnitude, wavelet_approximation, zscore
from itemsmith.handlers.synthetic._univariate import (
    anomaly,
    fat_tails,
    seasonality,
    stationarity,
    structural_break,
    trend,
    volatility,
)

__all__ = [
    "CHECKS",
    "GENERATORS",
    "KINDS",
    "MAX_DRAWS",
    "MIN_LENGTH",
    "UNCHECKED",
    "Synthetic",
    "UnrealizedLabelError",
    "add",
    "anomaly",
    "ar",
    "concatenate",
    "correlated_pair",
    "dcc_pair",
    "exponential",
    "fat_tails",
    "first_difference",
    "fourier_magnitude",
    "granger_pair",
    "lagged_pair",
    "linear",
    "ma",
    "multiply",
    "random_walk",
    "sawtooth",
    "seasonality",
    "sine",
    "square",
    "stationarity",
    "structural_break",
    "trend",
    "volatility",
    "wavelet_approximation",
    "white_noise",
    "zscore",
]
