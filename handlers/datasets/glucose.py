"""Continuous glucose monitor readings from bokeh_sampledata, one record per day."""

from __future__ import annotations

import pandas as pd

from itemsmith.handlers.datasets._frame import FrameHandler

READINGS_PER_DAY = 288  # one every 5 minutes


class GlucoseHandler(FrameHandler):
    name = "glucose"
    description = (
        "Continuous glucose monitor (CGM) readings of one person, 2010-03-24 to 2010-10-10, from bokeh_sampledata\n"
        "'glucose' (CGM.csv; public domain, given to a Bokeh maintainer by an acquaintance; device not documented).\n"
        "Readings nominally every 5 min (288 per full day) with gaps; the first and last days are partial. On\n"
        "2010-05-28/29 the file holds two interleaved streams 1 min apart (same isig, glucose ~10 mg/dL apart), kept\n"
        "as is, so those days have > 288 readings; 3 duplicated timestamps were dropped (first kept).\n"
        "200 records, one per calendar day: record_id 'YYYY-MM-DD'.\n"
        "series(id): DatetimeIndex 'datetime' (local clock time, no zone), columns glucose_mgdl (sensor glucose,\n"
        "mg/dL, whole numbers within the sensor range 40..400) and isig (raw sensor current, unit not documented,\n"
        "NaN for 2% of readings where the file says 'nil').\n"
        "Labels over the day's readings (counts, not time-weighted): n_readings, coverage (n_readings / 288),\n"
        "mean_mgdl, std_mgdl (ddof=1), min_mgdl, max_mgdl, tir_pct (% of readings 70-180 mg/dL inclusive),\n"
        "below_70_pct, above_180_pct (% of readings < 70 and > 180; the three percentages sum to 100)."
    )
    units = {"glucose_mgdl": "mg/dL"}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        from bokeh_sampledata.glucose import data

        frame = data[~data.index.duplicated(keep="first")].sort_index()
        frame = pd.DataFrame({"glucose_mgdl": frame["glucose"].astype(float),
                              "isig": pd.to_numeric(frame["isig"], errors="coerce")},
                             index=frame.index.rename("datetime"))
        rows, frames = [], {}
        for day, samples in frame.groupby(frame.index.normalize()):
            rid, g = day.strftime("%Y-%m-%d"), samples["glucose_mgdl"]
            rows.append({"record_id": rid, "n_readings": len(g), "coverage": len(g) / READINGS_PER_DAY,
                         "mean_mgdl": g.mean(), "std_mgdl": g.std(), "min_mgdl": g.min(), "max_mgdl": g.max(),
                         "tir_pct": 100 * g.between(70, 180).mean(), "below_70_pct": 100 * (g < 70).mean(),
                         "above_180_pct": 100 * (g > 180).mean()})
            frames[rid] = samples
        return pd.DataFrame(rows), frames
