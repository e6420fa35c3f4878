"""US macro data from statsmodels (`statsmodels.datasets.macrodata`) as a user's handler: quarterly
percentage changes with six decimals, one record per decade. Needs statsmodels."""

import numpy as np
import pandas as pd


class USMacroChanges:
    name = "us_macro_changes"
    description = ("Quarterly percentage changes of US real GDP, real consumption and real investment, 1959 Q2 to "
                   "2009 Q3 (statsmodels' macrodata), six decimals, in %. 6 records, one per decade: record_id "
                   "'1950s' to '2000s'. series(id): DatetimeIndex 'quarter' (first day of the quarter), columns "
                   "gdp, consumption, investment.")
    units = {"gdp": "%", "consumption": "%", "investment": "%"}

    def __init__(self):
        import statsmodels.api as sm

        data = sm.datasets.macrodata.load_pandas().data
        index = pd.PeriodIndex.from_fields(year=data["year"].astype(int), quarter=data["quarter"].astype(int),
                                           freq="Q").to_timestamp()
        levels = {"gdp": data["realgdp"], "consumption": data["realcons"], "investment": data["realinv"]}
        changes = pd.DataFrame({k: v.to_numpy(dtype=float) for k, v in levels.items()}, index=index)
        changes = changes.pct_change().mul(100).round(6).dropna()
        changes.index.name = "quarter"
        decades = (changes.index.year // 10) * 10
        self.frames = {f"{d}s": changes[decades == d] for d in np.unique(decades)}

    def records(self):
        return pd.DataFrame({"record_id": list(self.frames), "quarters": [len(f) for f in self.frames.values()]})

    def series(self, record_id):
        return self.frames[str(record_id)].copy()
