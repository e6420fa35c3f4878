"""Daily Seattle weather from vega_datasets (bundled file), one record per month."""

from __future__ import annotations

import pandas as pd

from itemsmith.handlers.datasets._frame import FrameHandler

CHANNELS = ["precipitation", "temp_max", "temp_min", "wind"]
CLASSES = ["drizzle", "fog", "rain", "snow", "sun"]


class SeattleWeatherHandler(FrameHandler):
    name = "weather"
    description = (
        "Daily weather in Seattle, 2012-01-01 to 2015-12-31, no missing days, from the seattle-weather file bundled\n"
        "in vega_datasets (derived from public-domain NOAA data). 48 records, one per month: record_id 'YYYY-MM'.\n"
        "series(id): DatetimeIndex 'date' (one row per day), columns precipitation (mm/day), temp_max and temp_min\n"
        "(daily max/min temperature, deg C), wind (mean wind speed, m/s).\n"
        "Each day also has a weather class from the source: sun, fog, rain, drizzle or snow. These classes are\n"
        "inconsistent: 'rain' dominates 2012 but nearly vanishes in 2014-2015 while 'fog' grows, and 310 'fog' and\n"
        "77 'sun' days have precipitation > 0; use the precipitation column for questions about rain.\n"
        "Labels per month: year, month, n_days; n_sun, n_fog, n_rain, n_drizzle, n_snow (days per class);\n"
        "dominant_weather (most frequent class, ties broken alphabetically); total_precip_mm; rainy_days (days with\n"
        "precipitation > 0); mean_temp_max_c, mean_temp_min_c; max_temp_c (max of temp_max); min_temp_c (min of\n"
        "temp_min); mean_wind_ms."
    )
    units = {"precipitation": "mm/day", "temp_max": "degC", "temp_min": "degC", "wind": "m/s"}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        from vega_datasets import local_data

        data = local_data.seattle_weather().set_index("date").sort_index()
        rows, frames = [], {}
        for month, days in data.groupby(data.index.to_period("M")):
            rid = str(month)
            counts = days["weather"].value_counts()
            counts = {c: int(counts.get(c, 0)) for c in CLASSES}
            rows.append({"record_id": rid, "year": month.year, "month": month.month, "n_days": len(days),
                         **{f"n_{c}": n for c, n in counts.items()},
                         "dominant_weather": max(CLASSES, key=lambda c: (counts[c], -CLASSES.index(c))),
                         "total_precip_mm": days["precipitation"].sum(),
                         "rainy_days": int((days["precipitation"] > 0).sum()),
                         "mean_temp_max_c": days["temp_max"].mean(), "mean_temp_min_c": days["temp_min"].mean(),
                         "max_temp_c": days["temp_max"].max(), "min_temp_c": days["temp_min"].min(),
                         "mean_wind_ms": days["wind"].mean()})
            frames[rid] = days[CHANNELS].astype(float)
        return pd.DataFrame(rows), frames
