"""Box & Jenkins' airline passengers (sktime's load_airline), one record per year."""

import pandas as pd

from itemsmith.handlers import DatasetHandler

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


class AirlinePassengers(DatasetHandler):
    name = "airline_passengers"
    description = (
        "Monthly totals of international airline passengers, in thousands, January 1949 to December 1960 (the "
        "Box & Jenkins airline series, shipped with sktime as load_airline). 12 records, one per year: "
        "record_id 'YYYY' ('1949' to '1960'). series(id): DatetimeIndex 'month' (the first day of each month), "
        "12 rows, one column passengers (thousands of passengers that month, whole numbers). "
        "Labels: year, total (the year's 12 months summed, thousands), peak (the largest monthly value) and "
        "peak_months (the month names reaching it, joined by '/'; 1949-1951 peak in July and August alike)."
    )
    units = {"passengers": "thousand passengers"}

    def __init__(self):
        from sktime.datasets import load_airline

        y = load_airline()
        frame = pd.DataFrame({"passengers": y.to_numpy(dtype=float)},
                             index=pd.DatetimeIndex(y.index.to_timestamp(), name="month"))
        self._years = {str(year): part for year, part in frame.groupby(frame.index.year)}

    def records(self):
        rows = []
        for rid, part in self._years.items():
            values = part["passengers"]
            top = values.max()
            rows.append({"record_id": rid, "year": int(rid), "total": float(values.sum()), "peak": float(top),
                         "peak_months": "/".join(MONTHS[d.month - 1] for d in values.index[values == top])})
        return pd.DataFrame(rows)

    def series(self, record_id):
        return self._years[str(record_id)].copy()
