"""Realization checks: a generated series is kept only when its values show its label.

The checks must reject exactly the failures an audit of the curated bank found (an
"uncorrelated" pair with r = -0.29, "clustered" volatility that grows 3-fold, a "contextual"
anomaly that is the series maximum, Granger "none" with a real dependency, a "random walk"
that mean-reverts); generators must redraw such realizations deterministically and give up
with a clear error when the given parameters cannot show the label.
"""

from __future__ import annotations

import numpy as np
import pytest

import itemsmith.handlers.synthetic as syn
from itemsmith.handlers.synthetic import _statistics as st

DETERMINISTIC = {"linear", "exponential", "sine", "sawtooth", "square"}


def test_every_stochastic_generator_has_a_realization_check():
    assert set(syn.CHECKS) == set(syn.GENERATORS) - DETERMINISTIC


def _first_rejected_seed(name: str, kwargs: dict, length: int) -> int:
    for seed in range(400):
        raw = syn.UNCHECKED[name](seed, length, **kwargs)
        if not syn.CHECKS[name](raw.values, raw.labels):
            return seed
    raise AssertionError(f"no raw {name} {kwargs} draw failed its check in 400 seeds")


@pytest.mark.parametrize(("name", "kwargs", "length"), [
    ("correlated_pair", {"kind": "none"}, 60),
    ("volatility", {"kind": "clustered"}, 250),
    ("anomaly", {"kind": "contextual"}, 120),
    ("stationarity", {"kind": "random_walk"}, 150),
    ("granger_pair", {"direction": "none"}, 150),
])
def test_a_rejected_draw_is_replaced_by_one_that_shows_the_label(name, kwargs, length):
    seed = _first_rejected_seed(name, kwargs, length)
    raw = syn.UNCHECKED[name](seed, length, **kwargs)
    made = syn.GENERATORS[name](seed, length, **kwargs)
    assert not np.array_equal(made.values, raw.values)
    assert syn.CHECKS[name](made.values, made.labels)
    again = syn.GENERATORS[name](seed, length, **kwargs)
    assert np.array_equal(again.values, made.values) and again.labels == made.labels


def test_parameters_too_weak_to_show_the_label_raise_a_clear_error():
    with pytest.raises(syn.UnrealizedLabelError, match=r"correlated_pair\(.*rho=0.05.*none of 200 realizations"):
        syn.correlated_pair(0, 40, kind="positive", rho=0.05)


# --- the audit's failures, built by hand: each check must say no -----------------------------


def _labels(name: str, **kwargs) -> dict:
    return dict(syn.UNCHECKED[name](0, 250 if name in ("volatility", "fat_tails") else 150, **kwargs).labels)


def test_an_uncorrelated_label_on_a_correlated_pair_is_rejected():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(120)
    y = -0.3 * x + np.sqrt(1 - 0.09) * rng.standard_normal(120)
    r, p = st.pearson(x, y)
    assert r < -0.2 and p < 0.01
    assert not syn.CHECKS["correlated_pair"](np.column_stack([x, y]), _labels("correlated_pair", kind="none"))


def test_clustered_volatility_that_grows_threefold_is_rejected():
    made = syn.volatility(5, 250, kind="clustered")
    assert syn.CHECKS["volatility"](made.values, made.labels)
    grown = np.array(made.values)
    grown[-83:] *= 3.0
    assert not syn.CHECKS["volatility"](grown, made.labels)


def test_a_contextual_anomaly_at_the_series_maximum_is_rejected():
    made = syn.anomaly(2, 120, kind="contextual")
    assert syn.CHECKS["anomaly"](made.values, made.labels)
    values = np.array(made.values)
    index = made.labels["anomaly_indices"][0]
    values[index] = values.max() + 0.5 * made.labels["amplitude"]
    assert not syn.CHECKS["anomaly"](values, made.labels)


def test_granger_none_on_a_causal_pair_is_rejected():
    causal = syn.granger_pair(1, 200, direction="x->y")
    labels = dict(causal.labels, direction="none", kind="none")
    assert not syn.CHECKS["granger_pair"](causal.values, labels)


def test_a_mean_reverting_series_labelled_random_walk_is_rejected():
    ar = syn.ar(4, 150, coefficients=[0.5]).values + 50.0
    assert not syn.CHECKS["stationarity"](ar, _labels("stationarity", kind="random_walk"))
    assert not syn.CHECKS["random_walk"](ar, syn.random_walk(0, 150).labels)


def test_a_gaussian_series_labelled_fat_tailed_is_rejected():
    gaussian = syn.fat_tails(0, 250, kind="gaussian")
    assert not syn.CHECKS["fat_tails"](gaussian.values, dict(gaussian.labels, fat_tailed=True))


def test_adf_statistic_and_critical_values_match_known_values():
    # a pure random walk: ADF cannot reject; a white noise: it rejects far below the 1% value
    rng = np.random.default_rng(0)
    walk = np.cumsum(rng.standard_normal(200))
    noise = rng.standard_normal(200)
    t_walk, used = st.adf_t(walk)
    t_noise, _ = st.adf_t(noise)
    assert t_walk > st.adf_critical(0.10, used)
    assert t_noise < st.adf_critical(0.01, used) - 3
    # MacKinnon (2010): the asymptotic 5% value with a constant is -2.86
    assert st.adf_critical(0.05, 10**9) == pytest.approx(-2.86154, abs=1e-4)
