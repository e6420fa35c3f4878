"""The handler data the fidelity check compares with, read in the sandbox (`audit/record_data.py`).

A user's handler file runs only in the sandbox's loader child; its `units` and `generated_series`
declarations reach the host through the pickle-free snapshot and the trusted fetch template, like
its columns. Record ids from template output enter the trusted source only as literals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from itemsmith.sandbox import run_template
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.sandbox.handler_data import snapshot_round_trip
from itemsmith.verification.audit.record_data import fetch_record_data, record_data_source

HANDLER = '''
import numpy as np
import pandas as pd


class Stations:
    name = "stations"
    description = "daily temperature of two stations"
    units = {"temp": "degC", "rain": "mm/day"}

    def records(self):
        return pd.DataFrame({"record_id": [7, 8]})

    def series(self, record_id):
        index = pd.date_range("2020-01-01", periods=5, freq="D", name="date")
        return pd.DataFrame({"temp": np.arange(5.0) + record_id, "rain": [0.0, 1.5, np.nan, 0.0, 2.0],
                             "note": list("abcde")}, index=index)
'''


@pytest.fixture
def handler_file(tmp_path: Path) -> Path:
    folder = tmp_path / "stations"
    folder.mkdir()
    path = folder / "stations.py"
    path.write_text(HANDLER)
    return path


def test_a_user_handlers_records_and_units_come_back_through_the_snapshot(handler_file: Path) -> None:
    pool = SandboxPool(str(handler_file))
    try:
        data = fetch_record_data(lambda source: pool.run(source, num_samples=1), ["7", "99", 8])
    finally:
        pool.close()
    assert data.error is None and data.units == {"temp": "degC", "rain": "mm/day"}
    assert data.missing == ["99"] and set(data.records) == {"7", "8"}
    seven = data.records["7"]
    assert seven.values("temp").tolist() == [7.0, 8.0, 9.0, 10.0, 11.0] and np.isnan(seven.values("rain")[2])
    assert "note" not in seven.columns and seven.stamps()[0] == "2020-01-01T00:00:00"


def test_record_ids_enter_the_trusted_source_only_as_literals() -> None:
    hostile = "x'] + __import__('os').listdir('/') + ['"
    source = record_data_source([hostile, 3, True, 2.5, None])
    assert f"WANTED = {[hostile, 3]!r}" in source  # a bool, a float and None are dropped


def test_builtin_handlers_declare_units_and_synthetic_declares_generation() -> None:
    pytest.importorskip("vega_datasets")
    weather = fetch_record_data(lambda source: run_template(source, "weather", num_samples=1), ["2013-03"])
    assert weather.units["temp_max"] == "degC" and weather.generated_series == ""
    assert len(weather.records["2013-03"].values("precipitation")) == 31
    synthetic = fetch_record_data(lambda source: run_template(source, "synthetic", num_samples=1), [])
    assert synthetic.generated_series and synthetic.records == {}


def test_the_snapshot_keeps_the_declarations() -> None:
    namespace: dict[str, object] = {}
    exec(compile(HANDLER, "<handler>", "exec"), namespace)
    restored = snapshot_round_trip(namespace["Stations"](), max_bytes=1 << 20, max_records=10)  # type: ignore[operator]
    assert restored.units == {"temp": "degC", "rain": "mm/day"} and restored.generated_series == ""
