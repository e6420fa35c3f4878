"""Data fidelity (verification.audit.fidelity): every channel an item shows is a stretch of a named
record's column under its own name and unit, or says how it was derived.

Pure tests: the handler data is a `RecordData` built here (what the sandbox fetch returns), the
items are built with the template helpers. Each attack is the cheapest way to fool the check; the
controls are sound items that must pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from itemsmith.items.helpers import mc_item, series
from itemsmith.items.schema import Item
from itemsmith.verification.audit.fidelity import check_fidelity
from itemsmith.verification.audit.record_data import RecordData, RecordFrame
from itemsmith.verification.audit.units import canonical_unit, units_named

RNG = np.random.default_rng(3)
DAYS = {"2013-03": [f"2013-03-{d:02d}T00:00:00" for d in range(1, 32)],
        "2013-04": [f"2013-04-{d:02d}T00:00:00" for d in range(1, 31)]}
COLUMNS = {rid: {"temp_max": list(np.round(RNG.normal(14, 4, len(days)), 1)),
                 "temp_min": list(np.round(RNG.normal(5, 3, len(days)), 1)),
                 "precipitation": list(np.round(np.maximum(0, RNG.normal(2, 4, len(days))), 1))}
           for rid, days in DAYS.items()}
WEATHER = RecordData(units={"temp_max": "degC", "temp_min": "degC", "precipitation": "mm/day"},
                     records={rid: RecordFrame.of(DAYS[rid], COLUMNS[rid]) for rid in DAYS})


def column(name: str, rid: str = "2013-03") -> np.ndarray:
    return np.asarray(COLUMNS[rid][name], dtype=float)


def item(values: Any, *, name: str = "temp_max", unit: str | None = "°C", question: str | None = None,
         record_ids: Any = ("2013-03",), start: int = 3, derived: str | None = None,
         options: tuple[str, ...] = ("12.0", "13.5", "15.1", "16.4")) -> Item:
    values = list(values)
    stamps = [d[:10] for d in (DAYS["2013-03"] + DAYS["2013-04"])[start:start + len(values)]]
    metadata = {"record_ids": list(record_ids)} if record_ids is not None else None
    return Item.model_validate(mc_item(
        question or "What was the highest daily maximum temperature (°C) in Seattle over these days?",
        options[0], list(options[1:]), rng=np.random.default_rng(0),
        series=[series(values, name=name, timestamps=stamps, unit=unit, derived=derived)], metadata=metadata))


def check(*items: Item, data: RecordData = WEATHER) -> Any:
    return check_fidelity(list(items), data)


# --- sound controls ---------------------------------------------------------------------------


def test_a_window_of_the_column_as_it_is_passes() -> None:
    assert check(item(column("temp_max")[3:20])).passed


@pytest.mark.parametrize("unit", ["°C", "degC", "deg C", "Celsius", "degrees Celsius", "℃", None])
def test_the_column_unit_in_any_spelling_passes(unit: str | None) -> None:
    finding = check(item(column("temp_max")[3:20], unit=unit))
    assert finding.passed, finding.message


def test_a_stretch_across_two_named_records_passes() -> None:
    values = np.concatenate([column("temp_max")[25:], column("temp_max", "2013-04")[:6]])
    assert check(item(values, record_ids=["2013-03", "2013-04"], start=25)).passed


def test_values_rounded_for_display_pass() -> None:
    assert check(item(np.round(column("precipitation")[:10] + 0.0, 0), name="precipitation", unit="mm/day", start=0,
                      question="How many days had more than 1 mm of precipitation?")).passed


def test_a_declared_derived_series_passes() -> None:
    rolled = np.convolve(column("temp_max"), np.ones(7) / 7, mode="valid")
    assert check(item(rolled, name="temp_max 7-day mean", derived="7-day mean of temp_max")).passed


def test_a_generated_series_on_a_handler_that_declares_generation_passes() -> None:
    data = RecordData(generated_series="made per item by the synth generators")
    assert check(item(RNG.normal(size=40), name="x", unit=None, record_ids=None), data=data).passed


# --- attacks ----------------------------------------------------------------------------------


def test_a_series_scaled_by_a_hair_fails_and_quotes_the_values() -> None:
    shown = column("temp_max")[3:20] * 1.0001
    finding = check(item(shown))
    assert not finding.passed
    assert "is not at its timestamps a column" in finding.message and "derived=" in finding.message
    assert f"2013-03-04: shown {shown[0]:.6g}, temp_max at that time is {column('temp_max')[3]:.6g}" in finding.message


def test_one_changed_value_fails_naming_its_day() -> None:
    shown = column("temp_max")[3:20].copy()
    shown[7] += 0.3
    finding = check(item(shown))
    assert not finding.passed
    assert "16 of 17 values equal" in finding.message and "2013-03-11: shown" in finding.message


def test_another_column_under_this_columns_name_fails() -> None:
    finding = check(item(column("temp_min")[3:20], name="temp_max"))
    assert not finding.passed and "names column 'temp_max' but shows column 'temp_min'" in finding.message


@pytest.mark.parametrize("unit", ["°F", "degF", "Fahrenheit", "K", "mm"])
def test_another_unit_on_the_column_fails(unit: str) -> None:
    finding = check(item(column("temp_max")[3:20], unit=unit))
    assert not finding.passed and "write unit='degC'" in finding.message


def test_a_question_naming_another_unit_fails() -> None:
    shown = item(column("precipitation")[:10], name="precipitation", unit="mm/day", start=0,
                 question="What was the total precipitation in inches over these days?")
    finding = check(shown)
    assert not finding.passed and "names the unit 'in' but the length shown is in 'mm'" in finding.message


def test_an_option_in_fahrenheit_under_a_celsius_series_fails() -> None:
    finding = check(item(column("temp_max")[3:20], options=("61 °F", "57 °F", "55 °F", "64 °F")))
    assert not finding.passed and "option" in finding.message and "degF" in finding.message


def test_a_conversion_labelled_with_the_old_unit_fails() -> None:
    fahrenheit = column("temp_max")[3:20] * 9 / 5 + 32
    finding = check(item(fahrenheit, unit="°C", derived="temp_max in Fahrenheit"))
    assert not finding.passed and "is in degF but is labelled '°C'" in finding.message


def test_a_derived_series_without_saying_how_fails_with_the_hint() -> None:
    for blank in ("", "   "):
        finding = check(item(column("temp_max")[3:20] + 1, derived=blank))
        assert not finding.passed and 'derived="<how it was made' in finding.message


def test_a_rolling_mean_not_declared_fails_with_the_hint() -> None:
    rolled = np.convolve(column("temp_max"), np.ones(7) / 7, mode="valid")
    finding = check(item(rolled, name="temp_max"))
    assert not finding.passed and 'derived="<how it was made' in finding.message


def test_an_item_naming_no_records_fails() -> None:
    finding = check(item(column("temp_max")[3:20], record_ids=None))
    assert not finding.passed and "metadata={'record_ids'" in finding.message


def test_an_item_naming_a_record_the_handler_lacks_fails() -> None:
    finding = check(item(column("temp_max")[3:20], record_ids=["2013-13"]),
                    data=WEATHER.model_copy(update={"missing": ["2013-13"]}))
    assert not finding.passed and "2013-13" in finding.message


def test_one_bad_item_among_good_ones_fails() -> None:
    good = [item(column("temp_max")[s:s + 10], start=s) for s in range(10)]
    bad = item(column("temp_max")[11:21] * 1.01, start=11)
    finding = check(*good, bad)
    assert not finding.passed and finding.message.startswith("1 of 11 items")


def test_a_failed_fetch_fails_the_check() -> None:
    assert not check(item(column("temp_max")[3:20]), data=RecordData(error="reading failed")).passed


# --- units ------------------------------------------------------------------------------------


def test_unit_spellings_share_one_canonical_unit() -> None:
    assert {canonical_unit(u) for u in ("°C", "deg C", "degC", "Celsius", "℃", "degrees celsius")} == \
        {canonical_unit("degC")}
    assert canonical_unit("mm/day") == canonical_unit("mm") == canonical_unit("millimetres per day")
    assert canonical_unit("°F") != canonical_unit("°C")
    assert canonical_unit("z-score") is None


def test_free_text_finds_units_but_not_words() -> None:
    assert {u.name for u in units_named("a high of 61 °F (about 16 deg C) and 3 inches of rain")} == \
        {"degF", "degC", "in"}
    assert units_named("Which month in 2013 had the most rain? Count days in March.") == set()


# --- by timestamp -------------------------------------------------------------------------------------


def stamped(values: Any, stamps: list[str], *, question: str = "What was the highest daily maximum temperature?",
            record_ids: Any = ("2013-03",), name: str = "temp_max") -> Item:
    return Item.model_validate(mc_item(question, "12.0", ["13.5", "15.1", "16.4"], rng=np.random.default_rng(0),
                                       series=[series(list(values), name=name, timestamps=stamps, unit="°C")],
                                       metadata={"record_ids": list(record_ids)}))


MARCH = [d[:10] for d in DAYS["2013-03"]]


def test_values_shifted_a_day_against_their_timestamps_fail_quoting_the_day() -> None:
    shown = column("temp_max")[4:20]  # the values of Mar 5..20 under the dates Mar 4..19
    finding = check(stamped(shown, MARCH[3:19]))
    assert not finding.passed
    assert f"2013-03-04: shown {shown[0]:.6g}, temp_max at that time is {column('temp_max')[3]:.6g}" in finding.message


@pytest.mark.parametrize("fmt", ["%Y-%m-%d", "%Y-%m-%d 00:00", "%b %d, %Y", "%d %B %Y", "%A, %B %d, %Y", "%d.%m.%Y",
                                 "%Y-%m-%dT%H:%M:%S"])
def test_timestamps_in_any_common_format_are_compared_as_moments(fmt: str) -> None:
    stamps = [np.datetime64(d).astype(object).strftime(fmt) for d in MARCH[3:19]]
    assert check(stamped(column("temp_max")[3:19], stamps)).passed
    assert not check(stamped(column("temp_max")[4:20], stamps)).passed  # and shifted, in that format, fails


def test_a_subset_of_the_rows_passes_at_its_timestamps() -> None:
    every_7th = list(range(0, 31, 7))
    assert check(stamped(column("temp_max")[every_7th], [MARCH[i] for i in every_7th])).passed
    assert not check(stamped(column("temp_max")[[i + 1 for i in every_7th[:-1]]], [MARCH[i] for i in every_7th[:-1]])).passed


def test_a_stretch_across_two_records_passes_at_its_timestamps() -> None:
    values = np.concatenate([column("temp_max")[25:], column("temp_max", "2013-04")[:6]])
    stamps = [d[:10] for d in DAYS["2013-03"][25:] + DAYS["2013-04"][:6]]
    assert check(stamped(values, stamps, record_ids=["2013-03", "2013-04"])).passed


def test_a_shifted_series_with_its_timestamps_dropped_fails_on_the_dates_the_question_names() -> None:
    shown = column("temp_max")[4:20]
    dropped = Item.model_validate(mc_item(
        "What was the highest daily maximum temperature from 2013-03-04 to 2013-03-19?", "12.0", ["13.5", "15.1", "16.4"],
        rng=np.random.default_rng(0), series=[series(list(shown), name="temp_max", unit="°C")],
        metadata={"record_ids": ["2013-03"]}))
    finding = check(dropped)
    assert not finding.passed and "names 2013-03-04" in finding.message and "2013-03-05 to 2013-03-20" in finding.message
    honest = dropped.model_copy(update={"question": "What was the highest daily maximum temperature from 2013-03-05 to "
                                                    "2013-03-20?"})
    assert check(honest).passed


def test_timestamps_in_a_format_the_audit_cannot_read_fail() -> None:
    stamps = [d.replace("-", "|") for d in MARCH[4:20]]
    finding = check(stamped(column("temp_max")[4:20], stamps))
    assert not finding.passed and "'2013|03|05', a date in a format the audit does not read" in finding.message


def test_labels_that_are_no_dates_are_compared_by_position() -> None:
    assert check(stamped(column("temp_max")[4:20], [f"day {i + 1}" for i in range(16)])).passed


def test_a_channel_mixing_two_records_on_the_same_dates_fails() -> None:
    other = {"temp_max": list(column("temp_max") + 5), "temp_min": list(column("temp_min")),
             "precipitation": list(column("precipitation"))}
    data = WEATHER.model_copy(update={"records": {**WEATHER.records, "2013-03 bis": RecordFrame.of(DAYS["2013-03"], other)}})
    mixed = np.concatenate([column("temp_max")[3:10], column("temp_max")[10:20] + 5])
    assert not check(stamped(mixed, MARCH[3:20], record_ids=["2013-03", "2013-03 bis"]), data=data).passed
    assert check(stamped(column("temp_max")[3:20] + 5, MARCH[3:20], record_ids=["2013-03", "2013-03 bis"]),
                 data=data).passed


def test_month_options_of_a_channel_without_timestamps_are_not_dates_it_claims() -> None:
    """"Which month is it?" over unlabelled days: the options are the reader's guesses, not dates shown."""
    hidden = Item.model_validate(mc_item(
        "These are 17 consecutive days of 2013 with the dates hidden. Which month is it?", "March",
        ["January", "July", "October"], rng=np.random.default_rng(0),
        series=[series(list(column("temp_max")[3:20]), name="temp_max", unit="°C")], metadata={"record_ids": ["2013-03"]}))
    assert check(hidden).passed
    assert not check(hidden.model_copy(update={"question": hidden.question.replace("2013", "2014")})).passed


def test_a_channel_named_after_one_named_record_showing_another_fails() -> None:
    """Four tickers' prices under each other's names (names in draw order, columns sorted)."""
    data = WEATHER.model_copy(update={"records": {
        "AAPL-2013": RecordFrame.of(DAYS["2013-03"], {"close": list(column("temp_max") + 100)}),
        "MSFT-2013": RecordFrame.of(DAYS["2013-03"], {"close": list(column("temp_max") + 50)})}, "units": {}})

    def ticker_item(name: str, values: np.ndarray) -> Item:
        return Item.model_validate(mc_item(
            "Which stock gained more?", "AAPL", ["MSFT"], rng=np.random.default_rng(0),
            series=[series(list(values), name=name, timestamps=MARCH[3:20])],
            metadata={"record_ids": ["AAPL-2013", "MSFT-2013"]}))
    assert check(ticker_item("AAPL close", column("temp_max")[3:20] + 100), data=data).passed
    finding = check(ticker_item("AAPL close", column("temp_max")[3:20] + 50), data=data)
    assert not finding.passed and "names record 'AAPL-2013' but shows record 'MSFT-2013'" in finding.message


# --- a channel whose own name says how it was made (no derived=) ------------------------------------


def trailing_mean(n: int) -> np.ndarray:
    values = np.concatenate([column("temp_max"), column("temp_max", "2013-04")])
    return np.convolve(values, np.ones(n) / n, mode="full")[:len(values)]


def test_a_rolling_mean_named_as_one_passes_without_derived() -> None:
    rolled = np.round(trailing_mean(7)[10:30], 4)
    assert check(item(rolled, name="temp_max 7-day mean", start=10, record_ids=("2013-03", "2013-04"))).passed


def test_a_name_that_says_another_window_than_the_values_fails() -> None:
    """The cheapest way round: call a 5-day mean a 7-day mean; the name is recomputed, not trusted."""
    rolled = np.round(trailing_mean(5)[10:30], 4)
    finding = check(item(rolled, name="temp_max 7-day mean", start=10, record_ids=("2013-03", "2013-04")))
    assert not finding.passed and "untraced" in finding.message


TRADED = np.round(RNG.uniform(2e6, 9e6, 31))
VOLUME = RecordData(units={"volume": "shares"},
                    records={"AAPL-2013": RecordFrame.of(DAYS["2013-03"], {"volume": list(TRADED)})})


def volume_item(scale: float, unit: str) -> Item:
    shown = TRADED[3:20] / scale
    return Item.model_validate(mc_item(
        "Daily trading volume of AAPL. On which day was it largest?", "2013-03-04", ["2013-03-05", "2013-03-06"],
        rng=np.random.default_rng(0), metadata={"record_ids": ["AAPL-2013"]},
        series=[series(shown, name="AAPL volume", unit=unit, timestamps=[d[:10] for d in DAYS["2013-03"][3:20]])]))


def test_a_column_shown_in_the_millions_its_unit_names_passes() -> None:
    assert check_fidelity([volume_item(1e6, "million shares")], VOLUME).passed


def test_a_column_scaled_otherwise_than_its_unit_says_fails() -> None:
    assert not check_fidelity([volume_item(1e3, "million shares")], VOLUME).passed
    assert not check_fidelity([volume_item(1e6, "shares")], VOLUME).passed


def trailing(n: int, how: str) -> np.ndarray:
    values = pd.Series(np.concatenate([column("temp_max"), column("temp_max", "2013-04")]))
    return getattr(values.rolling(n, min_periods=1), how)().to_numpy()


@pytest.mark.parametrize(("name", "passes"), [("temp_max 7-day median", True), ("temp_max", True),
                                              ("smoothed temp_max", True), ("temp_max 7-day mean", False)])
def test_a_derived_channel_named_as_another_recipe_fails(name: str, passes: bool) -> None:
    """derived= says a 7-day median and the values are one; a name that is itself a recipe must agree with
    them too (readers read the name), while a name that is no recipe says nothing to contradict."""
    median = np.round(trailing(7, "median")[10:30], 4)
    finding = check(item(median, name=name, start=10, record_ids=("2013-03", "2013-04"),
                         derived="7-day trailing median of temp_max"))
    assert finding.passed is passes, finding.message
    if not passes:
        assert "is named as" in finding.message
