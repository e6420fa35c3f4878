"""The synthetic generator API (shapes, determinism, labels, operators, transforms) and the
SyntheticHandler contract. Label correctness per family lives in test_synthetic_labels.py."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pandas as pd
import pytest

import itemsmith.handlers.synthetic as syn
from itemsmith.handlers import DatasetHandler, get_builtin
from itemsmith.handlers.synthetic_handler import SyntheticHandler

PAIRS = {"correlated_pair", "lagged_pair", "dcc_pair", "granger_pair"}
CASES = [(name, kind) for name in syn.GENERATORS for kind in syn.KINDS.get(name, (None,))]


def _kind(name: str, kind: str | None) -> dict[str, str]:
    return {} if kind is None else {"direction" if name == "granger_pair" else "kind": kind}


def test_public_api_is_exactly_the_listed_names() -> None:
    public = {n for n in dir(syn) if not n.startswith("_")}
    assert set(syn.__all__) == public
    assert set(syn.GENERATORS) <= set(syn.__all__)
    assert set(syn.KINDS) <= set(syn.GENERATORS) and set(syn.MIN_LENGTH) == set(syn.GENERATORS)


@pytest.mark.parametrize("name", sorted(syn.GENERATORS))
def test_generator_signature_and_docstring(name: str) -> None:
    generator = syn.GENERATORS[name]
    parameters = list(inspect.signature(generator).parameters.values())
    assert [p.name for p in parameters[:2]] == ["rng", "length"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[2:])
    assert parameters[1].default >= syn.MIN_LENGTH[name]
    assert generator.__doc__ and "Labels" in generator.__doc__


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_shape_labels_and_determinism(name: str, kind: str | None) -> None:
    generator = syn.GENERATORS[name]
    made = generator(7, 90 if syn.MIN_LENGTH[name] <= 90 else syn.MIN_LENGTH[name], **_kind(name, kind))
    n = made.length
    assert made.values.shape == ((n, 2) if name in PAIRS else (n,))
    assert np.all(np.isfinite(made.values))
    assert made.labels == json.loads(json.dumps(made.labels))  # plain JSON, nothing lost
    assert isinstance(made.labels["family"], str) and isinstance(made.labels["kind"], str)
    if kind is not None:
        assert made.labels["kind"] == kind
    again = generator(np.random.default_rng(7), n, **_kind(name, kind))
    assert np.array_equal(made.values, again.values) and made.labels == again.labels
    other = generator(8, n, **_kind(name, kind))
    assert not np.array_equal(made.values, other.values)


def test_values_are_read_only_and_kind_is_drawn_when_missing() -> None:
    made = syn.trend(1)
    with pytest.raises(ValueError):
        made.values[0] = 0.0
    drawn = {syn.seasonality(seed).labels["kind"] for seed in range(40)}
    assert drawn == set(syn.KINDS["seasonality"])


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="length"):
        syn.volatility(0, 50)
    with pytest.raises(ValueError, match="kind must be one of"):
        syn.trend(0, kind="sideways")
    with pytest.raises(ValueError, match="direction must be one of"):
        syn.granger_pair(0, direction="both")
    with pytest.raises(TypeError, match="Generator or an int"):
        syn.trend(None)
    with pytest.raises(ValueError, match="not stationary"):
        syn.ar(0, coefficients=[1.2])
    with pytest.raises(ValueError, match="not invertible"):
        syn.ma(0, coefficients=[1.5])
    with pytest.raises(ValueError, match="shape"):
        syn.trend(0, kind="up", shape="zigzag")


def test_given_parameters_are_used() -> None:
    assert syn.sine(0, 120, period=12, amplitude=3.0, phase=0.0).values[3] == pytest.approx(3.0)
    assert syn.linear(0, 10, slope=2.0, intercept=1.0).values.tolist() == [1.0 + 2.0 * t for t in range(10)]
    anomaly = syn.anomaly(0, 120, kind="spike", count=2, position=30)
    assert 30 in anomaly.labels["anomaly_indices"] and anomaly.labels["count"] == 2
    assert syn.structural_break(0, 100, kind="level", break_index=40).labels["break_index"] == 40
    assert syn.lagged_pair(0, 100, kind="negative", lag=4).labels["lag"] == 4
    assert syn.granger_pair(0, 150, direction="y->x", lag=2).labels["cause"] == "y"


def test_add_multiply_concatenate() -> None:
    line, wave = syn.linear(1, 60, slope=0.5, intercept=2.0), syn.sine(2, 60, period=10)
    total = syn.add(line, wave)
    assert np.allclose(total.values, line.values + wave.values)
    assert total.labels["family"] == "composite" and total.labels["kind"] == "add"
    assert [c["kind"] for c in total.labels["components"]] == ["linear", "sine"]
    product = syn.multiply(line, wave)
    assert np.allclose(product.values, line.values * wave.values)
    joined = syn.concatenate(line, syn.white_noise(3, 70), wave)
    assert joined.length == 190 and joined.labels["boundaries"] == [60, 130]
    assert np.array_equal(joined.values[60:130], syn.white_noise(3, 70).values)
    nested = syn.add(total, syn.white_noise(4, 60))
    assert nested.labels["components"][0]["kind"] == "add"
    json.dumps(nested.labels)
    with pytest.raises(ValueError, match="same shape"):
        syn.add(line, syn.sine(2, 50))
    with pytest.raises(ValueError, match="at least 2"):
        syn.concatenate(line)
    with pytest.raises(ValueError, match="channels"):
        syn.concatenate(line, syn.correlated_pair(0, 60))


def test_first_difference_of_a_line_is_constant() -> None:
    diff = syn.first_difference(syn.linear(0, 50, slope=-1.5).values)
    assert diff.shape == (49,) and np.allclose(diff, -1.5)
    assert syn.first_difference(np.ones((5, 2))).shape == (4, 2)


def test_fourier_magnitude_of_a_sine_peaks_at_its_frequency() -> None:
    n, period = 120, 12
    magnitude = syn.fourier_magnitude(syn.sine(0, n, period=period, amplitude=2.0).values + 5.0)
    assert magnitude.shape == (n // 2,)
    assert int(np.argmax(magnitude)) == n // period - 1  # element i is frequency (i + 1) / n
    assert magnitude.max() == pytest.approx(2.0 * n / 2)


def test_wavelet_approximation_smooths_and_keeps_length() -> None:
    rng = np.random.default_rng(0)
    smooth = np.sin(np.linspace(0, 4 * np.pi, 256))
    noisy = smooth + 0.3 * rng.standard_normal(256)
    approx = syn.wavelet_approximation(noisy)
    assert approx.shape == noisy.shape
    assert np.abs(approx - smooth).mean() < np.abs(noisy - smooth).mean() / 2
    assert np.allclose(syn.wavelet_approximation(np.full(64, 3.0), level=2), 3.0)
    with pytest.raises(ValueError, match="level"):
        syn.wavelet_approximation(noisy, level=20)


def test_zscore() -> None:
    z = syn.zscore([1.0, 2.0, 3.0, 4.0])
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    assert np.array_equal(syn.zscore([5.0, 5.0]), [0.0, 0.0])
    assert np.allclose(syn.zscore(np.array([[1.0, 10.0], [3.0, 30.0]])), [[-1, -1], [1, 1]])


# ---------------------------------------------------------------- SyntheticHandler


@pytest.fixture(scope="module")
def handler() -> SyntheticHandler:
    return get_builtin("synthetic")


def test_handler_is_registered_and_described(handler: SyntheticHandler) -> None:
    assert isinstance(handler, DatasetHandler) and handler.name == "synthetic"
    assert "2024-01-01" in handler.description and "record_id" in handler.description


def test_records_cover_every_generator_and_kind(handler: SyntheticHandler) -> None:
    records = handler.records()
    assert records["record_id"].is_unique
    assert list(records.columns[:6]) == ["record_id", "generator", "family", "kind", "length", "n_channels"]
    counts = records.groupby(["generator", "kind"]).size()
    assert len(counts) == len(CASES) and set(counts) == {8}
    assert records["length"].between(60, 300).all()
    assert set(records.loc[records["generator"].isin(PAIRS), "n_channels"]) == {2}
    spikes = records[records["kind"] == "spike"]
    assert all(isinstance(v, tuple) for v in spikes["anomaly_indices"])


def test_series_frames(handler: SyntheticHandler) -> None:
    records = handler.records().set_index("record_id")
    for record_id in ["trend-up-0", "granger_pair-x->y-3", "sine-5"]:
        frame = handler.series(record_id)
        assert isinstance(frame.index, pd.DatetimeIndex) and frame.index[0] == pd.Timestamp("2024-01-01")
        assert frame.index.freq == "D" and len(frame) == records.loc[record_id, "length"]
        assert list(frame.columns) == (["x", "y"] if record_id.startswith("granger") else ["value"])
    assert handler.query("trend-up-0").equals(handler.series("trend-up-0"))
    with pytest.raises(KeyError, match="unknown record_id"):
        handler.series("nope")


def test_handler_returns_copies_and_is_deterministic(handler: SyntheticHandler) -> None:
    frame = handler.series("trend-up-0")
    frame.iloc[:, 0] = 0.0
    assert not (handler.series("trend-up-0")["value"] == 0.0).all()
    records = handler.records()
    records.loc[0, "kind"] = "changed"
    records.drop(columns="family", inplace=True)
    assert handler.records().loc[0, "kind"] != "changed" and "family" in handler.records()
    fresh = SyntheticHandler()
    assert fresh.records().equals(handler.records())
    assert fresh.series("anomaly-spike-2").equals(handler.series("anomaly-spike-2"))


def test_labels_in_records_match_the_series(handler: SyntheticHandler) -> None:
    records = handler.records().set_index("record_id")
    for record_id in records.index[records["kind"] == "dropout"]:
        row, values = records.loc[record_id], handler.series(record_id)["value"].to_numpy()
        assert np.all(values[int(row["start"]) : int(row["end"])] == 0.0)
        assert np.all(values[: int(row["start"])] > 0.0)


def test_wavelet_approximation_accepts_a_generator_read_only_values():
    from itemsmith.handlers import synthetic as syn

    made = syn.sine(0, 64)
    assert not made.values.flags.writeable
    assert syn.wavelet_approximation(made.values).shape == (64,)
