"""Monthly El Nino sea surface temperature (statsmodels' elnino dataset), one record per year."""

import pandas as pd

from itemsmith.handlers import DatasetHandler

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]


class ElNinoSST(DatasetHandler):
    name = "elnino_sst"
    description = (
        "Monthly mean sea surface temperature of the Pacific's El Nino region (Nino 1+2, off Peru and Ecuador), "
        "in degrees Celsius (two decimals), January 1950 to December 2010, from statsmodels.datasets.elnino "
        "(NOAA Climate Prediction Center). 61 records, one per year: record_id 'YYYY' ('1950' to '2010'). "
        "series(id): DatetimeIndex 'month' (the first day of each month), 12 rows, one column sst (degC). "
        "Labels: year, mean_sst (mean of the 12 months), warmest_month and coldest_month (month names)."
    )
    units = {"sst": "degC"}

    def __init__(self):
        import statsmodels.api as sm

        data = sm.datasets.elnino.load_pandas().data
        self._years = {}
        for _, row in data.iterrows():
            year = int(row["YEAR"])
            index = pd.DatetimeIndex(pd.date_range(f"{year}-01-01", periods=12, freq="MS"), name="month")
            self._years[str(year)] = pd.DataFrame({"sst": row[MONTHS].to_numpy(dtype=float)}, index=index)

    def records(self):
        rows = []
        for rid, part in self._years.items():
            sst = part["sst"]
            rows.append({"record_id": rid, "year": int(rid), "mean_sst": float(sst.mean()),
                         "warmest_month": sst.idxmax().strftime("%B"), "coldest_month": sst.idxmin().strftime("%B")})
        return pd.DataFrame(rows)

    def series(self, record_id):
        return self._years[str(record_id)].copy()
