"""Mauna Loa weekly atmospheric CO2 (statsmodels' co2 dataset), one record per calendar year."""

import pandas as pd

from itemsmith.handlers import DatasetHandler


class MaunaLoaCO2Weekly(DatasetHandler):
    name = "co2_weekly"
    description = (
        "Weekly atmospheric CO2 concentration at Mauna Loa Observatory, Hawaii, in ppm (parts per million, "
        "mole fraction in dry air), 1958-03-29 to 2001-12-29, from statsmodels.datasets.co2 (Scripps CO2 "
        "program). 44 records, one per calendar year: record_id 'YYYY' ('1958' to '2001'); 1958 starts in March. "
        "series(id): DatetimeIndex 'week' (the Saturday that ends each week), one column co2 (ppm, one "
        "decimal); a year has 52 or 53 weeks (53 in 1960, 1966, 1972, 1977, 1983, 1988, 1994, 2000). 59 weeks "
        "have no measurement and are NaN (21 of them in 1964). Labels: year, n_weeks, n_missing, mean_co2 (mean "
        "of the measured weeks, ppm), min_co2, max_co2."
    )
    units = {"co2": "ppm"}

    def __init__(self):
        import statsmodels.api as sm

        data = sm.datasets.co2.load_pandas().data
        frame = pd.DataFrame({"co2": data["co2"].astype(float)}, index=pd.DatetimeIndex(data.index, name="week"))
        self._years = {str(year): part for year, part in frame.groupby(frame.index.year)}

    def records(self):
        rows = []
        for rid, part in self._years.items():
            co2 = part["co2"]
            rows.append({"record_id": rid, "year": int(rid), "n_weeks": len(co2), "n_missing": int(co2.isna().sum()),
                         "mean_co2": float(co2.mean()), "min_co2": float(co2.min()), "max_co2": float(co2.max())})
        return pd.DataFrame(rows)

    def series(self, record_id):
        return self._years[str(record_id)].copy()
