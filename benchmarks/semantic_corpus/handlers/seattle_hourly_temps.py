"""Hourly air temperature of Seattle in 2010 (vega_datasets' bundled seattle-temps), one record per month."""

import pandas as pd

from itemsmith.handlers import DatasetHandler


class SeattleHourlyTemps(DatasetHandler):
    name = "seattle_hourly_temps"
    description = (
        "Hourly air temperature in Seattle, WA, in degrees Fahrenheit (one decimal), 2010-01-01 00:00 to "
        "2010-12-31 23:00, local time, from the seattle-temps file bundled in vega_datasets. 12 records, one per "
        "month: record_id 'YYYY-MM' ('2010-01' to '2010-12'). series(id): DatetimeIndex 'time' (one row per "
        "hour), one column temp (degF). The hour 2010-03-14 02:00 does not exist (daylight saving time starts), "
        "so that day has 23 rows and every other day 24. Labels: month, "
        "n_hours, mean_temp_f, min_temp_f, max_temp_f."
    )
    units = {"temp": "degF"}

    def __init__(self):
        from vega_datasets import local_data

        data = local_data.seattle_temps()
        frame = pd.DataFrame({"temp": data["temp"].to_numpy(dtype=float)},
                             index=pd.DatetimeIndex(data["date"], name="time")).sort_index()
        self._months = {str(month): part for month, part in frame.groupby(frame.index.to_period("M"))}

    def records(self):
        rows = []
        for rid, part in self._months.items():
            temp = part["temp"]
            rows.append({"record_id": rid, "month": int(rid[5:]), "n_hours": len(temp),
                         "mean_temp_f": float(temp.mean()), "min_temp_f": float(temp.min()),
                         "max_temp_f": float(temp.max())})
        return pd.DataFrame(rows)

    def series(self, record_id):
        return self._months[str(record_id)].copy()
