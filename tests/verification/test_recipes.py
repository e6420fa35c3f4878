"""`derived=` read as a recipe and recomputed (verification.audit.recipes, through the fidelity check).

Each correct channel is made the way a user makes it, with pandas on the handler's frame (rolling,
resample, pct_change, z-scores, conversions, sums of columns), over records shaped like the
built-in handlers' (a weather handler of monthly records of daily rows, a stocks handler of trading
days, a macro series with six decimals, an hourly one); its `derived=` is written the way users
write it, in several phrasings. Each flawed one is one edit away (another window, another
aggregate, another column, a centred window declared trailing, a shift), and each attack is the
cheapest way to make a lying text pass (a text that parses but lies, a text too vague to check, two
recipes in one text).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from itemsmith.items.helpers import mc_item, series
from itemsmith.items.schema import Item
from itemsmith.verification.audit.fidelity import check_fidelity
from itemsmith.verification.audit.recipes import (
    Change,
    Column,
    Combine,
    Convert,
    Resample,
    Rolling,
    ZScore,
    describe,
    parse_recipe,
)
from itemsmith.verification.audit.record_data import RecordData, RecordFrame
from itemsmith.verification.audit.units import canonical_unit
from itemsmith.verification.settings import AuditConfig

RNG = np.random.default_rng(11)

# weather: one record per month (record_id "YYYY-MM"), daily rows 2012-01-01 .. 2013-12-31
DAYS = pd.date_range("2012-01-01", "2013-12-31", freq="D")
WEATHER_FRAME = pd.DataFrame({
    "temp_max": np.round(12 + 8 * np.sin(np.arange(len(DAYS)) / 58) + RNG.normal(0, 3, len(DAYS)), 1),
    "temp_min": np.round(4 + 6 * np.sin(np.arange(len(DAYS)) / 58) + RNG.normal(0, 2, len(DAYS)), 1),
    "precipitation": np.round(np.maximum(0, RNG.normal(1, 5, len(DAYS))), 1),
}, index=DAYS)
# stocks: one record per ticker, trading days (no weekends), two tickers on the same days
TRADING = pd.bdate_range("2013-01-01", "2014-12-31")
STOCKS = {ticker: pd.DataFrame({"close": np.round(p, 2), "open": np.round(p * (1 + RNG.normal(0, 0.01, len(p))), 2)},
                               index=TRADING)
          for ticker, p in (("AAPL", 60 * np.exp(np.cumsum(RNG.normal(0, 0.015, len(TRADING))))),
                            ("MSFT", 30 * np.exp(np.cumsum(RNG.normal(0, 0.012, len(TRADING))))))}
# macro: monthly changes in percent with six decimals
MONTHS = pd.date_range("1990-01-01", periods=360, freq="MS")
MACRO = pd.DataFrame({"unemployment_change": np.round(RNG.normal(0.05, 0.4, len(MONTHS)), 6)}, index=MONTHS)
# hourly temperature, one record per week
HOURS = pd.date_range("2015-06-01", periods=24 * 14, freq="h")
HOURLY = pd.DataFrame({"temperature": np.round(18 + 6 * np.sin(np.arange(len(HOURS)) / 24 * 2 * np.pi)
                                               + RNG.normal(0, 1, len(HOURS)), 1)}, index=HOURS)


def _frame(frame: pd.DataFrame) -> RecordFrame:
    return RecordFrame.of([t.strftime("%Y-%m-%dT%H:%M:%S") for t in frame.index],
                          {c: frame[c].tolist() for c in frame.columns})


RECORDS = {f"{m:%Y-%m}": _frame(WEATHER_FRAME.loc[f"{m:%Y-%m}"]) for m in pd.date_range("2012-01", "2013-12", freq="MS")}
RECORDS |= {ticker: _frame(frame) for ticker, frame in STOCKS.items()}
RECORDS["UNRATE"] = _frame(MACRO)
RECORDS["week 1"] = _frame(HOURLY.iloc[:168])
RECORDS["week 2"] = _frame(HOURLY.iloc[168:])
DATA = RecordData(units={"temp_max": "degC", "temp_min": "degC", "precipitation": "mm", "close": "USD",
                         "open": "USD", "unemployment_change": "%", "temperature": "degC"},
                  records=RECORDS)


def months_of(index: pd.Index) -> list[str]:
    return sorted({f"{t:%Y-%m}" for t in index})


def item(values: Any, *, derived: str | None, stamps: Any = None, fmt: str = "%Y-%m-%d", records: list[str],
         name: str = "derived", unit: str | None = None, question: str = "What is the highest value shown?") -> Item:
    values = [float(v) for v in values]
    timestamps = None if stamps is None else [t.strftime(fmt) if hasattr(t, "strftime") else str(t) for t in stamps]
    return Item.model_validate(mc_item(question, "1.0", ["2.0", "3.0", "4.0"], rng=np.random.default_rng(0),
                                       series=[series(values, name=name, timestamps=timestamps, unit=unit,
                                                      derived=derived)],
                                       metadata={"record_ids": records}))


def check(*items: Item, config: AuditConfig | None = None) -> Any:
    return check_fidelity(list(items), DATA, config or AuditConfig())


def weather(start: str, end: str) -> pd.DataFrame:
    return WEATHER_FRAME.loc[start:end]


# --- reading the text ------------------------------------------------------------------------------

COLUMNS = ["temp_max", "temp_min", "precipitation", "close", "open", "volume"]


@pytest.mark.parametrize(("text", "expected"), [
    ("7-day rolling mean of temp_max", Rolling(Column("temp_max"), "mean", 7, "day", None)),
    ("rolling mean of temp_max over 7 days", Rolling(Column("temp_max"), "mean", 7, "day", None)),
    ("7-day mean of temp_max", Rolling(Column("temp_max"), "mean", 7, "day", None)),
    ("The 7-day trailing average of temp_max.", Rolling(Column("temp_max"), "mean", 7, "day", False)),
    ("centred 7-day mean of temp_max", Rolling(Column("temp_max"), "mean", 7, "day", True)),
    ("temp_max, 7-day rolling mean", Rolling(Column("temp_max"), "mean", 7, "day", None)),
    ("30-day moving average of close", Rolling(Column("close"), "mean", 30, "day", None)),
    ("temp_max.rolling(7).mean()", Rolling(Column("temp_max"), "mean", 7, "row", False)),
    ("rolling(7, center=True).mean() of temp_max", Rolling(Column("temp_max"), "mean", 7, "row", True)),
    ("monthly total of precipitation", Resample(Column("precipitation"), "M", "sum")),
    ("monthly precipitation total", Resample(Column("precipitation"), "M", "sum")),
    ("total precipitation per week", Resample(Column("precipitation"), "W", "sum")),
    ("precipitation.resample('W').sum()", Resample(Column("precipitation"), "W", "sum", (0,))),
    ("daily max of temp_max", Resample(Column("temp_max"), "D", "max")),
    ("daily change of close", Change(Column("close"), "diff", 1, "day")),
    ("close.diff()", Change(Column("close"), "diff", 1, "row")),
    ("daily percentage change of close", Change(Column("close"), "pct", 1, "day", scales=(100.0,))),
    ("df['close'].pct_change()", Change(Column("close"), "pct", 1, "row", scales=(1.0, 100.0))),
    ("log return of close", Change(Column("close"), "log", 1, "row", scales=(1.0, 100.0))),
    ("z-score of close", ZScore(Column("close"))),
    ("standardized close", ZScore(Column("close"))),
    ("temp_max in degF", Convert(Column("temp_max"), canonical_unit("degF"))),  # type: ignore[arg-type]
    ("temp_max converted to Fahrenheit", Convert(Column("temp_max"), canonical_unit("degF"))),  # type: ignore[arg-type]
    ("temp_max (°F)", Convert(Column("temp_max"), canonical_unit("degF"))),  # type: ignore[arg-type]
    ("temp_max - temp_min", Combine(Column("temp_max"), Column("temp_min"), "-")),
    ("daily temperature range (temp_max minus temp_min)", Combine(Column("temp_max"), Column("temp_min"), "-")),
    ("difference between temp_max and temp_min", Combine(Column("temp_max"), Column("temp_min"), "-", True)),
    ("close / open", Combine(Column("close"), Column("open"), "/")),
    ("ratio of close to open", Combine(Column("close"), Column("open"), "/")),
    ("7-day rolling mean of temp_max in degF",
     Convert(Rolling(Column("temp_max"), "mean", 7, "day", None), canonical_unit("degF"))),  # type: ignore[arg-type]
    ("monthly mean of the weekly volume (resampled by month, mean)", Resample(Column("volume"), "M", "mean")),
    ("daily mean of the hourly temp_max (resampled by day)", Resample(Column("temp_max"), "D", "mean")),
])
def test_phrasings_users_write_read_as_recipes(text: str, expected: Any) -> None:
    assert expected in parse_recipe(text, COLUMNS), [describe(r) for r in parse_recipe(text, COLUMNS)]


@pytest.mark.parametrize("text", [
    "smoothed temperature", "rolling mean of temp_max", "exponential moving average of close",
    "cumulative sum of precipitation", "7-day mean of temp_max (10-day)", "5-day mean of close (10-day mean of close)",
    "7-day mean of temp_mean", "mean of temp_max", "temp_max, cleaned", "close (smoothed)", "close: adjusted",
    "daily mean of the hourly temp_max (resampled by week)",
])
def test_texts_the_vocabulary_cannot_read_give_no_recipe(text: str) -> None:
    assert parse_recipe(text, COLUMNS) == []


# --- correct derived channels pass --------------------------------------------------------------------


def rolled(frame: pd.DataFrame, column: str, n: int, how: str = "mean", **kw: Any) -> pd.Series:
    return getattr(frame[column].rolling(n, **kw), how)().dropna()


CORRECT = {
    "trailing 7-day mean": lambda: (lambda r: item(r.round(2), derived="7-day rolling mean of temp_max", stamps=r.index,
                                                   records=months_of(r.index)))(
        rolled(WEATHER_FRAME, "temp_max", 7).loc["2012-03-10":"2012-04-20"]),
    "centred mean, no timestamps": lambda: item(
        rolled(WEATHER_FRAME, "temp_max", 7, center=True).loc["2012-05-01":"2012-05-25"].round(1),
        derived="centred 7-day mean of temp_max", records=["2012-04", "2012-05", "2012-06"]),
    "mean over a window computed on the slice only": lambda: (lambda part: item(
        part["temp_max"].rolling(5, min_periods=1).mean().round(2), derived="rolling mean of temp_max over 5 days",
        stamps=part.index, fmt="%b %d, %Y", records=months_of(part.index)))(weather("2012-07-11", "2012-08-09")),
    "monthly totals, month starts": lambda: (lambda m: item(m, derived="monthly total of precipitation", stamps=m.index,
                                                            records=months_of(m.index)))(
        weather("2012-01-01", "2012-12-31")["precipitation"].resample("MS").sum().round(1)),
    "monthly totals, month ends": lambda: (lambda m: item(m, derived="precipitation.resample('M').sum()",
                                                          stamps=m.index, records=months_of(m.index)))(
        weather("2013-01-01", "2013-08-31")["precipitation"].resample("ME").sum().round(1)),
    "monthly totals labelled 'Mar 2012'": lambda: (lambda m: item(m, derived="total precipitation per month",
                                                                  stamps=m.index, fmt="%b %Y",
                                                                  records=months_of(m.index)))(
        weather("2012-03-01", "2012-10-31")["precipitation"].resample("MS").sum().round(1)),
    "monthly totals of a window cut mid-month": lambda: (lambda m: item(m, derived="monthly precipitation total",
                                                                        stamps=m.index, fmt="%Y-%m",
                                                                        records=months_of(m.index)))(
        weather("2012-02-17", "2012-06-09")["precipitation"].resample("MS").sum().round(1)),
    "weekly means over a 53-week year": lambda: (lambda w: item(w, derived="weekly mean of temp_max", stamps=w.index,
                                                                records=months_of(w.index)))(
        weather("2012-01-01", "2012-12-31")["temp_max"].resample("W").mean().round(2)),
    "weekly totals, weeks from Monday": lambda: (lambda w: item(w, derived="weekly precipitation totals", stamps=w.index,
                                                                records=months_of(w.index)))(
        weather("2013-01-07", "2013-04-28")["precipitation"].resample("W-MON", label="left", closed="left").sum()),
    "daily percentage change on trading days": lambda: (lambda c: item(
        (c.pct_change() * 100).dropna().round(2).iloc[30:60], derived="daily percentage change of close",
        stamps=c.index[31:61], records=["AAPL"]))(STOCKS["AAPL"]["close"]),
    "pct_change as a fraction": lambda: (lambda c: item(
        c.pct_change().dropna().round(5).iloc[100:140], derived="close.pct_change()", stamps=c.index[101:141],
        records=["MSFT"]))(STOCKS["MSFT"]["close"]),
    "change over 5 trading days": lambda: (lambda c: item(
        c.diff(5).dropna().round(2).iloc[10:40], derived="5-day change of close", stamps=c.index[15:45],
        records=["AAPL"]))(STOCKS["AAPL"]["close"]),
    "z-score over the window shown": lambda: (lambda c: item(
        ((c - c.mean()) / c.std()).round(3), derived="z-score of close", stamps=c.index, records=["AAPL"]))(
        STOCKS["AAPL"]["close"].iloc[200:260]),
    "z-score with ddof 0": lambda: (lambda c: item(
        ((c - c.mean()) / c.std(ddof=0)).round(3), derived="standardized close", records=["MSFT"]))(
        STOCKS["MSFT"]["close"].iloc[50:90]),
    "log of close": lambda: item(np.log(STOCKS["AAPL"]["close"].iloc[:40]).round(4), derived="natural log of close",
                                 stamps=TRADING[:40], records=["AAPL"]),
    "Fahrenheit": lambda: item((weather("2012-06-01", "2012-06-30")["temp_max"] * 9 / 5 + 32).round(1),
                               derived="temp_max in degF", unit="°F", stamps=weather("2012-06-01", "2012-06-30").index,
                               records=["2012-06"]),
    "temperature range": lambda: (lambda p: item((p["temp_max"] - p["temp_min"]).round(1),
                                                 derived="daily temperature range (temp_max - temp_min)",
                                                 stamps=p.index, records=["2013-02"], unit="°C"))(
        weather("2013-02-01", "2013-02-28")),
    "close over open": lambda: item((STOCKS["AAPL"]["close"] / STOCKS["AAPL"]["open"]).iloc[300:330].round(4),
                                    derived="close / open", stamps=TRADING[300:330], records=["AAPL"]),
    "nested: rolling mean of a conversion": lambda: (lambda f: item(
        f.rolling(7).mean().dropna().round(1).loc["2012-09-01":"2012-09-30"], derived="7-day rolling mean of temp_max "
        "in degF", unit="degF", stamps=pd.date_range("2012-09-01", "2012-09-30"), records=["2012-08", "2012-09"]))(
        WEATHER_FRAME["temp_max"] * 1.8 + 32),
    "six decimals, 12-month rolling sum": lambda: (lambda r: item(
        r.loc["2000-01-01":"2003-12-01"].round(6), derived="12-month rolling sum of unemployment_change",
        stamps=r.loc["2000-01-01":"2003-12-01"].index, fmt="%Y-%m", records=["UNRATE"], unit="%"))(
        MACRO["unemployment_change"].rolling(12).sum()),
    "a column in thousands": lambda: item((STOCKS["AAPL"]["close"].iloc[:40] / 1e3).round(4),
                                          derived="close in thousands", stamps=TRADING[:40], records=["AAPL"]),
    "a column divided by a number": lambda: item((STOCKS["MSFT"]["close"].iloc[:40] / 1e6).round(8),
                                                 derived="close / 1e6", stamps=TRADING[:40], records=["MSFT"]),
    "hourly to daily maximum": lambda: (lambda d: item(d, derived="daily max of temperature", stamps=d.index,
                                                       records=["week 1", "week 2"]))(
        HOURLY["temperature"].resample("D").max()),
}


@pytest.mark.parametrize("make", list(CORRECT.values()), ids=list(CORRECT))
def test_a_correct_derived_channel_passes(make: Any) -> None:
    finding = check(make())
    assert finding.passed, finding.message


# --- flawed derived channels fail -----------------------------------------------------------------------


def ten_day_mean_declared_five() -> Item:
    close = STOCKS["AAPL"]["close"].rolling(10).mean().dropna().iloc[:40]
    return item(close.round(2), derived="5-day mean of close", stamps=close.index, records=["AAPL"])


FLAWED = {
    "a 10-day mean declared a 5-day mean": ten_day_mean_declared_five,
    "a centred window declared trailing": lambda: (lambda r: item(r.round(2), derived="7-day trailing mean of temp_max",
                                                                  stamps=r.index, records=months_of(r.index)))(
        rolled(WEATHER_FRAME, "temp_max", 7, center=True).loc["2012-03-10":"2012-04-20"]),
    "monthly means declared totals": lambda: (lambda m: item(m, derived="monthly total of precipitation", stamps=m.index,
                                                             records=months_of(m.index)))(
        weather("2012-01-01", "2012-12-31")["precipitation"].resample("MS").mean().round(1)),
    "temp_min declared temp_max": lambda: (lambda r: item(r.round(2), derived="7-day rolling mean of temp_max",
                                                          stamps=r.index, records=months_of(r.index)))(
        rolled(WEATHER_FRAME, "temp_min", 7).loc["2012-03-10":"2012-04-20"]),
    "a rolling mean shifted a day against its timestamps": lambda: (lambda r: item(
        r.round(2).iloc[1:], derived="7-day rolling mean of temp_max", stamps=r.index[:-1], records=months_of(r.index)))(
        rolled(WEATHER_FRAME, "temp_max", 7).loc["2012-03-10":"2012-04-20"]),
    "Fahrenheit without the offset": lambda: item((weather("2012-06-01", "2012-06-30")["temp_max"] * 9 / 5).round(1),
                                                  derived="temp_max in degF", unit="°F",
                                                  stamps=weather("2012-06-01", "2012-06-30").index, records=["2012-06"]),
    "Celsius declared converted to Fahrenheit": lambda: item(
        weather("2012-06-01", "2012-06-30")["temp_max"], derived="temp_max in degF", unit="°F",
        stamps=weather("2012-06-01", "2012-06-30").index, records=["2012-06"]),
    "open over close declared close over open": lambda: item(
        (STOCKS["AAPL"]["open"] / STOCKS["AAPL"]["close"]).iloc[300:330].round(4), derived="close / open",
        stamps=TRADING[300:330], records=["AAPL"]),
    "another ticker's returns": lambda: (lambda c: item(
        (c.pct_change() * 100).dropna().round(2).iloc[30:60], derived="daily percentage change of close",
        stamps=c.index[31:61], records=["AAPL"]))(STOCKS["MSFT"]["close"]),
}


@pytest.mark.parametrize("make", list(FLAWED.values()), ids=list(FLAWED))
def test_a_derived_channel_that_is_not_what_its_text_says_fails(make: Any) -> None:
    finding = check(make())
    assert not finding.passed and "wrong derivation" in finding.message, finding.message


def test_the_failure_quotes_the_first_points_that_differ() -> None:
    finding = check(ten_day_mean_declared_five())
    assert "of 40 values equal" in finding.message and "2013-01-15: shown" in finding.message
    assert "at that time is" in finding.message


@pytest.mark.parametrize("text", ["smoothed closing price", "rolling mean of close", "5-day mean of close (10-day mean "
                                  "of close)", "exponential moving average of close"])
def test_a_derivation_the_vocabulary_cannot_read_is_unverified_and_rejects(text: str) -> None:
    shown = STOCKS["AAPL"]["close"].ewm(span=5).mean().iloc[:40].round(2)
    finding = check(item(shown, derived=text, stamps=shown.index, records=["AAPL"]))
    assert not finding.passed and "unverified derivation" in finding.message
    assert "vocabulary" in finding.message and 'recipe.rolling("temp_max", "mean", 7)' in finding.message


def test_the_unverified_setting_flags_instead_and_is_listed_as_lowered() -> None:
    config = AuditConfig(unverified_derivation="flag")
    shown = STOCKS["AAPL"]["close"].ewm(span=5).mean().iloc[:40].round(2)
    finding = check(item(shown, derived="smoothed closing price", stamps=shown.index, records=["AAPL"]), config=config)
    assert finding.passed and "flagged, not checked" in finding.message
    assert "unverified_derivation=flag (default reject)" in config.lowered()
    assert not check(ten_day_mean_declared_five(), config=config).passed  # a derivation that is wrong still fails


def test_a_derivation_on_records_the_item_does_not_name_is_unverified() -> None:
    r = rolled(WEATHER_FRAME, "temp_max", 7).loc["2012-03-10":"2012-04-20"]
    finding = check(item(r.round(2), derived="7-day rolling mean of temp_max", stamps=r.index, records=["AAPL"]))
    assert not finding.passed and "cannot be computed" in finding.message


# --- the recipe helper writes texts the audit verifies ----------------------------------------------------


def test_every_text_the_recipe_helper_writes_is_read_back() -> None:
    from itemsmith.items.helpers import recipe

    texts = [recipe.rolling("temp_max", "mean", 7), recipe.rolling("close", "std", 20, unit="point", centred=True),
             recipe.resample("precipitation", "week", "total"), recipe.change("close", 5, kind="percent"),
             recipe.change("close", kind="log"), recipe.zscore("close"), recipe.zscore("close", 30),
             recipe.log("close"), recipe.convert("temp_max", "degF"), recipe.combine("close", "/", "open"),
             recipe.rolling(recipe.convert("temp_max", "degF"), "mean", 7)]
    for text in texts:
        assert parse_recipe(text, COLUMNS), text


@pytest.mark.parametrize(("make", "text"), [
    (lambda: rolled(WEATHER_FRAME, "temp_max", 7).loc["2012-03-10":"2012-04-20"].round(2),
     lambda r: r.rolling("temp_max", "mean", 7)),
    (lambda: weather("2012-01-01", "2012-12-31")["precipitation"].resample("MS").sum().round(1),
     lambda r: r.resample("precipitation", "month", "sum")),
    (lambda: (STOCKS["AAPL"]["close"].pct_change() * 100).dropna().round(3).iloc[:50],
     lambda r: r.change("close", kind="percent")),
])
def test_a_channel_declared_with_the_recipe_helper_passes(make: Any, text: Any) -> None:
    from itemsmith.items.helpers import recipe

    values = make()
    records = months_of(values.index) if values.index[0].year < 2013 else ["AAPL"]
    assert check(item(values, derived=text(recipe), stamps=values.index, records=records)).passed
