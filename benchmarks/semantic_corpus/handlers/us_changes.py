"""Quarterly changes of US macroeconomic series (sktime's load_uschange, from fpp2), one record per decade."""

import pandas as pd

from itemsmith.handlers import DatasetHandler

COLUMNS = {"Consumption": "consumption", "Income": "income", "Production": "production", "Savings": "savings",
           "Unemployment": "unemployment"}


class USChanges(DatasetHandler):
    name = "us_changes"
    description = (
        "Quarterly changes of US macroeconomic series, 1970 Q1 to 2016 Q3, from sktime's load_uschange (the "
        "uschange data of Hyndman & Athanasopoulos, Forecasting: Principles and Practice), values rounded to six "
        "decimals. 5 records, one per decade: record_id '1970s', '1980s', '1990s', '2000s', '2010s' (the 2010s "
        "end with 2016 Q3: 27 quarters; the others have 40). series(id): DatetimeIndex 'quarter' (the first day "
        "of each quarter, e.g. 1970-04-01 is 1970 Q2), columns consumption, income, production, savings "
        "(percentage changes from the previous quarter of real personal consumption expenditure, real personal "
        "disposable income, industrial production and personal savings, in %) and unemployment (change of the "
        "unemployment rate from the previous quarter, in percentage points). Labels: decade, n_quarters, and "
        "mean_<column> (the mean of each column over the decade)."
    )
    units = {"consumption": "%", "income": "%", "production": "%", "savings": "%", "unemployment": "pp"}

    def __init__(self):
        from sktime.datasets import load_uschange

        y, x = load_uschange()
        frame = pd.concat([y, x], axis=1).rename(columns=COLUMNS)[list(COLUMNS.values())].round(6)
        frame.index = pd.DatetimeIndex(pd.period_range("1970Q1", periods=len(frame), freq="Q").to_timestamp(),
                                       name="quarter")
        self._decades = {f"{decade}s": part for decade, part in frame.groupby(frame.index.year // 10 * 10)}

    def records(self):
        rows = []
        for rid, part in self._decades.items():
            rows.append({"record_id": rid, "decade": int(rid[:4]), "n_quarters": len(part),
                         **{f"mean_{c}": float(part[c].mean()) for c in part.columns}})
        return pd.DataFrame(rows)

    def series(self, record_id):
        return self._decades[str(record_id)].copy()
