"""The built-in "synthetic" dataset: a fixed catalogue of generated series with ground-truth labels."""

from __future__ import annotations

import zlib
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from itemsmith.handlers.base import DatasetHandler
from itemsmith.handlers.synthetic import GENERATORS, KINDS, MIN_LENGTH

_SEED = 20240101
_PER_KIND = 8
_MIN_LENGTH, _MAX_LENGTH = 60, 300
_START = "2024-01-01"


def _kind_argument(name: str, kind: str | None) -> dict[str, str]:
    if kind is None:
        return {}
    return {"direction" if name == "granger_pair" else "kind": kind}


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | bool | int | float)


class SyntheticHandler(DatasetHandler):
    """A fixed catalogue built from `handlers.synthetic` with one seed: same records every time."""

    name = "synthetic"
    description = (
        "Synthetic time series made by itemsmith's own generators (handlers.synthetic) from a fixed "
        "seed; no real-world data, values are unitless. 8 records per generator and kind, lengths "
        "60 to 300 samples, one sample per day from 2024-01-01 (the calendar is nominal). "
        "series(record_id) has one column `value`, or columns `x` and `y` for the pair families "
        "(correlation, cross_correlation, dynamic_correlation, granger_causality). "
        "Every stochastic series was kept only if textbook statistics of its values show its label clearly "
        "(e.g. an 'uncorrelated' pair is not significantly correlated, a random walk is not rejected by ADF). "
        "records() has record_id, generator, family, kind, length, n_channels, then the ground truth "
        "each series was built with (empty where a label does not apply); indices (anomaly_indices, "
        "start, end (exclusive), break_index, change_index) are 0-based row positions. Families and kinds: "
        "trend up/down/none (shape linear/quadratic/exponential, change, slope, slope_sign); "
        "seasonality none/fixed/varying_amplitude/shifting/multiple (period, periods, amplitude, "
        "period_start, period_end); anomaly none/spike/level_shift/step/dropout/contextual "
        "(anomaly_indices, start, end, shift, magnitudes); volatility constant/increasing/clustered/"
        "leverage (returns around 0; GARCH omega, alpha, beta, gamma; sigma_start, sigma_end); "
        "structural_break none/level/trend/variance (break_index, level_before/after, slope_before/after, "
        "sigma_before/after); stationarity stationary/random_walk/trend_stationary (stationary, unit_root, "
        "phi, slope); fat_tails fat_tailed/gaussian (df of the Student-t); correlation positive/negative/none "
        "(rho); cross_correlation positive/negative (y lags x by `lag` steps, rho); dynamic_correlation "
        "positive_to_negative/negative_to_positive/correlated_to_uncorrelated/uncorrelated_to_correlated "
        "(change_index, rho_before, rho_after); granger_causality x->y/y->x/none (cause, effect, lag, "
        "coefficient); pattern (noise-free or simple stochastic base patterns, kind = linear, exponential, "
        "sine, sawtooth, square, ar, ma, white_noise, random_walk; period, amplitude, slope, coefficients, ...)."
    )
    generated_series = ("templates make their series per item with the synth generators (handlers.synthetic), "
                        "or show the catalogue's records; every value is generated and unitless")

    @cached_property
    def _catalogue(self) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
        rows: list[dict[str, Any]] = []
        values: dict[str, np.ndarray] = {}
        for name, generator in GENERATORS.items():
            for kind in KINDS.get(name, (None,)):
                for i in range(_PER_KIND):
                    record_id = f"{name}-{kind}-{i}" if kind else f"{name}-{i}"
                    rng = np.random.default_rng([_SEED, zlib.crc32(record_id.encode())])
                    length = int(rng.integers(max(_MIN_LENGTH, MIN_LENGTH[name]), _MAX_LENGTH + 1))
                    made = generator(rng, length, **_kind_argument(name, kind))
                    labels = {
                        key: tuple(value) if isinstance(value, list) else value
                        for key, value in made.labels.items()
                        if _is_scalar(value) or (isinstance(value, list) and all(map(_is_scalar, value)))
                    }
                    rows.append({"record_id": record_id, "generator": name, "length": made.length,
                                 "n_channels": 1 if made.values.ndim == 1 else made.values.shape[1], **labels})
                    values[record_id] = made.values
        front = ["record_id", "generator", "family", "kind", "length", "n_channels"]
        frame = pd.DataFrame(rows)
        return frame[front + [c for c in frame.columns if c not in front]], values

    def records(self) -> pd.DataFrame:
        """One row per record: record_id, generator, family, kind, length, n_channels and the
        ground-truth labels (list labels are tuples). A fresh copy on every call."""
        return self._catalogue[0].copy()

    def series(self, record_id: Any) -> pd.DataFrame:
        """The record's samples: daily DatetimeIndex named `date` from 2024-01-01, column `value`
        (or `x` and `y` for pairs). A fresh copy on every call."""
        values = self._catalogue[1].get(record_id)
        if values is None:
            raise KeyError(f"unknown record_id {record_id!r}; the ids are in records()['record_id']")
        index = pd.date_range(_START, periods=values.shape[0], freq="D", name="date")
        columns = ["value"] if values.ndim == 1 else ["x", "y"]
        return pd.DataFrame(np.array(values), index=index, columns=columns)
