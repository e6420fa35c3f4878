"""A user's own handler over a real dataset from an installed package: weekly Mauna Loa CO2
(statsmodels), one record per year 1959 to 2001, the few missing weeks interpolated.

    python benchmarks/reasoning_plan.py --handler benchmarks/co2_handler.py --templates 3
"""

from __future__ import annotations

from typing import Any

import pandas as pd


class Co2Handler:
    name = "co2"
    description = ("Weekly atmospheric CO2 at Mauna Loa, Hawaii (ppm, statsmodels' co2 data set), one record per "
                   "year 1959 to 2001: record_id 'YYYY'. series(id): DatetimeIndex 'week', column co2 (ppm); the "
                   "few missing weeks are interpolated.")
    units = {"co2": "ppm"}

    def __init__(self) -> None:
        import statsmodels.api as sm

        data = sm.datasets.co2.load_pandas().data["co2"].interpolate()
        data.index.name = "week"
        self.frames = {str(year): data[str(year)].to_frame() for year in range(1959, 2002)}

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": list(self.frames), "year": [int(y) for y in self.frames]})

    def series(self, record_id: Any) -> pd.DataFrame:
        return self.frames[str(record_id)].copy()
