"""Text rendering: the nine formats of Fons et al. Appendix F and `compact`, checked against hand-written text."""

from __future__ import annotations

import pytest

from itemsmith.items.rendering import TextFormat, render_item, render_series
from itemsmith.items.schema import Item, Series

DATES = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
SERIES = Series(name="load", values=[1.0, 2.5, 2.5, 0.75], timestamps=DATES, unit="kW")

EXPECTED = {
    "csv": "Date,Value\n2024-01-01,1.00\n2024-01-02,2.50\n2024-01-03,2.50\n2024-01-04,0.75\n",
    "plain": ("Date:2024-01-01,Value:1.00\nDate:2024-01-02,Value:2.50\n"
              "Date:2024-01-03,Value:2.50\nDate:2024-01-04,Value:0.75"),
    "tsv": "Date\tValue\n2024-01-01\t1.00\n2024-01-02\t2.50\n2024-01-03\t2.50\n2024-01-04\t0.75\n",
    "json": ('{"Date":"2024-01-01","Value":1.00}\n{"Date":"2024-01-02","Value":2.50}\n'
             '{"Date":"2024-01-03","Value":2.50}\n{"Date":"2024-01-04","Value":0.75}\n'),
    "markdown": ("|Date|Value|\n|---|---|\n|2024-01-01|1.00|\n|2024-01-02|2.50|\n"
                 "|2024-01-03|2.50|\n|2024-01-04|0.75|\n"),
    "spaces": "Date,Value\n2024-01-01,1 . 0 0\n2024-01-02,2 . 5 0\n2024-01-03,2 . 5 0\n2024-01-04,0 . 7 5\n",
    "context": "Date,Value\n2024-01-01,[1.00]\n2024-01-02,[2.50]\n2024-01-03,[2.50]\n2024-01-04,[0.75]\n",
    "symbol": ("Date,Value,DirectionIndicator\n2024-01-01,1.00,→\n2024-01-02,2.50,↑\n"
               "2024-01-03,2.50,→\n2024-01-04,0.75,↓\n"),
    "custom": "Date|Value\n2024-01-01|1.00\n2024-01-02|2.50\n2024-01-03|2.50\n2024-01-04|0.75\n",
    "compact": "Date: 2024-01-01 to 2024-01-04, every 1 day (4 values)\nValue: 1.00, 2.50, 2.50, 0.75",
}


def test_every_format_has_an_expectation() -> None:
    assert set(EXPECTED) == {f.value for f in TextFormat}


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_format_matches_appendix(fmt: str) -> None:
    assert render_series([SERIES], fmt) == EXPECTED[fmt]
    assert render_series([SERIES], TextFormat(fmt)) == EXPECTED[fmt]


def test_appendix_example_reproduced_exactly() -> None:
    # The appendix's own series, integers, decimals=0.
    s = Series(values=[100, 105, 103, 103], timestamps=["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"])
    assert render_series([s], "csv", 0) == "Date,Value\n2020-01-01,100\n2020-01-02,105\n2020-01-03,103\n2020-01-04,103\n"
    assert render_series([s], "plain", 0) == (
        "Date:2020-01-01,Value:100\nDate:2020-01-02,Value:105\nDate:2020-01-03,Value:103\nDate:2020-01-04,Value:103")
    assert render_series([s], "spaces", 0) == (
        "Date,Value\n2020-01-01,1 0 0\n2020-01-02,1 0 5\n2020-01-03,1 0 3\n2020-01-04,1 0 3\n")
    assert render_series([s], "symbol", 0) == (
        "Date,Value,DirectionIndicator\n2020-01-01,100,→\n2020-01-02,105,↑\n2020-01-03,103,↓\n2020-01-04,103,→\n")
    assert render_series([s], "json", 0) == (
        '{"Date":"2020-01-01","Value":100}\n{"Date":"2020-01-02","Value":105}\n'
        '{"Date":"2020-01-03","Value":103}\n{"Date":"2020-01-04","Value":103}\n')


def test_compact_states_an_uneven_time_axis_in_full_and_an_index_once() -> None:
    uneven = Series(values=[1, 2, 3], timestamps=["2024-01-01T00:00:00", "2024-01-01T00:15:00", "2024-01-01T00:40:00"])
    assert render_series([uneven], "compact", 0) == (
        "Time: 2024-01-01T00:00:00, 2024-01-01T00:15:00, 2024-01-01T00:40:00\nValue: 1, 2, 3")
    hourly = Series(values=[1, 2], timestamps=["2024-01-01T00:00:00", "2024-01-01T02:00:00"])
    assert render_series([hourly], "compact", 0).startswith("Time: 2024-01-01T00:00:00 to 2024-01-01T02:00:00, every 2 h")
    channels = [Series(name="a", values=[1, 2]), Series(name="b", values=[3, 4])]
    assert render_series(channels, "compact", 0) == "Index: 0 to 1\na: 1, 2\nb: 3, 4"


def test_decimals_honored() -> None:
    s = Series(values=[1.23456, -0.5, 0.0004], timestamps=DATES[:3])
    # -0.5 rounds (half to even) to -0, printed as 0
    assert render_series([s], "csv", 0) == "Date,Value\n2024-01-01,1\n2024-01-02,0\n2024-01-03,0\n"
    assert render_series([s], "csv", 3) == "Date,Value\n2024-01-01,1.235\n2024-01-02,-0.500\n2024-01-03,0.000\n"
    assert render_series([s], "spaces", 1) == "Date,Value\n2024-01-01,1 . 2\n2024-01-02,- 0 . 5\n2024-01-03,0 . 0\n"


def test_negative_zero_prints_as_zero() -> None:
    s = Series(values=[-0.001, 0.0])
    assert render_series([s], "csv") == "Index,Value\n0,0.00\n1,0.00\n"


def test_symbol_compares_printed_values() -> None:
    # 1.001 and 1.004 both print as 1.00 with two decimals: unchanged, not up.
    s = Series(values=[1.001, 1.004, 0.9])
    assert render_series([s], "symbol") == "Index,Value,DirectionIndicator\n0,1.00,→\n1,1.00,→\n2,0.90,↓\n"


def test_no_timestamps_uses_sample_index() -> None:
    s = Series(values=[3.0, 4.0, 5.0])
    assert render_series([s], "plain") == "Index:0,Value:3.00\nIndex:1,Value:4.00\nIndex:2,Value:5.00"
    assert render_series([s], "json", 1) == '{"Index":0,"Value":3.0}\n{"Index":1,"Value":4.0}\n{"Index":2,"Value":5.0}\n'
    assert render_series([s], "markdown", 0) == "|Index|Value|\n|---|---|\n|0|3|\n|1|4|\n|2|5|\n"


def test_datetime_timestamps_use_time_header() -> None:
    s = Series(values=[1.0, 2.0], timestamps=["2024-01-01 00:00", "2024-01-01 00:05"])
    assert render_series([s], "csv", 0) == "Time,Value\n2024-01-01 00:00,1\n2024-01-01 00:05,2\n"


def test_two_aligned_channels_side_by_side() -> None:
    hr = Series(name="hr", values=[60.0, 62.0, 61.0], timestamps=DATES[:3], unit="bpm")
    spo2 = Series(name="spo2", values=[98.0, 98.0, 99.0], timestamps=DATES[:3], unit="%")
    assert render_series([hr, spo2], "csv", 0) == (
        "Date,hr,spo2\n2024-01-01,60,98\n2024-01-02,62,98\n2024-01-03,61,99\n")
    assert render_series([hr, spo2], "plain", 0) == (
        "Date:2024-01-01,hr:60,spo2:98\nDate:2024-01-02,hr:62,spo2:98\nDate:2024-01-03,hr:61,spo2:99")
    assert render_series([hr, spo2], "json", 0) == (
        '{"Date":"2024-01-01","hr":60,"spo2":98}\n{"Date":"2024-01-02","hr":62,"spo2":98}\n'
        '{"Date":"2024-01-03","hr":61,"spo2":99}\n')
    assert render_series([hr, spo2], "markdown", 0) == (
        "|Date|hr|spo2|\n|---|---|---|\n|2024-01-01|60|98|\n|2024-01-02|62|98|\n|2024-01-03|61|99|\n")
    assert render_series([hr, spo2], "symbol", 0) == (
        "Date,hr,hr DirectionIndicator,spo2,spo2 DirectionIndicator\n"
        "2024-01-01,60,→,98,→\n2024-01-02,62,↑,98,→\n2024-01-03,61,↓,99,↑\n")


def test_channels_of_different_length_get_one_block_each() -> None:
    a = Series(name="a", values=[1.0, 2.0], unit="m")
    b = Series(name="b", values=[5.0, 4.0, 3.0])
    assert render_series([a, b], "csv", 0) == (
        "Series: a (unit: m)\nIndex,Value\n0,1\n1,2\n\nSeries: b\nIndex,Value\n0,5\n1,4\n2,3\n")
    assert render_series([a, b], "plain", 0) == (
        "Series: a (unit: m)\nIndex:0,Value:1\nIndex:1,Value:2\n\nSeries: b\nIndex:0,Value:5\nIndex:1,Value:4\nIndex:2,Value:3")


def test_same_length_different_timestamps_not_merged() -> None:
    a = Series(name="a", values=[1.0, 2.0], timestamps=DATES[:2])
    b = Series(name="b", values=[3.0, 4.0], timestamps=DATES[2:])
    assert render_series([a, b], "custom", 0) == (
        "Series: a\nDate|Value\n2024-01-01|1\n2024-01-02|2\n\nSeries: b\nDate|Value\n2024-01-03|3\n2024-01-04|4\n")


def test_separator_in_channel_name_is_quoted() -> None:
    a = Series(name="x,y", values=[1.0])
    b = Series(name="z", values=[2.0])
    assert render_series([a, b], "csv", 0) == 'Index,"x,y",z\n0,1,2\n'


def test_single_series_accepted_and_empty_list() -> None:
    assert render_series(SERIES, "csv") == EXPECTED["csv"]
    assert render_series([], "csv") == ""


def test_default_format_is_plain() -> None:
    assert render_series([SERIES]) == EXPECTED["plain"]


def test_format_name_case_insensitive() -> None:
    assert render_series([SERIES], "CSV") == EXPECTED["csv"]


def test_unknown_format_lists_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        render_series([SERIES], "yaml")
    message = str(err.value)
    assert "yaml" in message
    for f in TextFormat:
        assert f.value in message


def test_negative_decimals_rejected() -> None:
    with pytest.raises(ValueError, match="decimals"):
        render_series([SERIES], "csv", -1)


ITEM = Item(
    question="What is the overall trend of the load?",
    options=["increasing", "decreasing", "flat"],
    answer_index=1,
    series=[SERIES],
    context="Hourly electricity load of one household.",
)


def test_render_item_full_prompt() -> None:
    assert render_item(ITEM, "csv") == (
        "Hourly electricity load of one household.\n\n"
        "Series: load (unit: kW)\n"
        "Date,Value\n2024-01-01,1.00\n2024-01-02,2.50\n2024-01-03,2.50\n2024-01-04,0.75\n\n"
        "What is the overall trend of the load?\n\n"
        "A) increasing\nB) decreasing\nC) flat"
    )


def test_render_item_blind_variant_has_no_series() -> None:
    text = render_item(ITEM, "csv", include_series=False)
    assert text == (
        "Hourly electricity load of one household.\n\n"
        "What is the overall trend of the load?\n\n"
        "A) increasing\nB) decreasing\nC) flat"
    )
    assert "2024-01-01" not in text and "Series:" not in text


def test_render_item_without_context_and_two_channels() -> None:
    hr = Series(name="hr", values=[60.0, 62.0], unit="bpm")
    spo2 = Series(name="spo2", values=[98.0, 97.0], unit="%")
    item = Item(question="Which channel rises?", options=["hr", "spo2"], answer="hr", kind="tf",
                series=[hr, spo2])
    assert render_item(item, "plain", decimals=0) == (
        "Series: hr (unit: bpm), spo2 (unit: %)\n"
        "Index:0,hr:60,spo2:98\nIndex:1,hr:62,spo2:97\n\n"
        "Which channel rises?\n\n"
        "A) hr\nB) spo2"
    )


def test_render_item_six_options_lettered() -> None:
    item = Item(question="Pick", options=[f"o{i}" for i in range(6)], answer_index=5)
    assert render_item(item).endswith("A) o0\nB) o1\nC) o2\nD) o3\nE) o4\nF) o5")


def test_render_item_unknown_format() -> None:
    with pytest.raises(ValueError, match="valid formats"):
        render_item(ITEM, "xml")


# --- downsampling for reviewers -------------------------------------------------------------


def test_downsample_keeps_ends_and_extremes_evenly_spaced_with_their_times():
    from itemsmith.items.rendering import downsample_item

    values = [float(i % 7) for i in range(300)]
    values[137], values[211] = 50.0, -50.0  # extremes between the evenly spaced positions
    stamps = [f"2024-01-01 {i // 60:02d}:{i % 60:02d}" for i in range(300)]
    item = Item(question="q?", options=["a", "b"], answer_index=0,
                series=[Series(name="level", values=values, timestamps=stamps),
                        Series(name="flow", values=[float(i) for i in range(300)], timestamps=stamps)])
    shown, note = downsample_item(item, 40)
    level, flow = shown.series
    assert len(level.values) == len(flow.values) == 40 and level.timestamps == flow.timestamps  # still aligned
    assert level.timestamps is not None and level.timestamps[0] == stamps[0] and level.timestamps[-1] == stamps[-1]
    assert 50.0 in level.values and -50.0 in level.values
    assert stamps[137] in level.timestamps and stamps[211] in level.timestamps
    for kept, stamp in zip(level.values, level.timestamps, strict=True):
        assert kept == values[stamps.index(stamp)]  # every value stays with its own time
    gaps = [stamps.index(b) - stamps.index(a) for a, b in zip(level.timestamps, level.timestamps[1:])]
    assert max(gaps) <= 2 * 300 / 36  # evenly spaced, not the first 40 values
    assert "level: 40 of 300 values" in note and "flow: 40 of 300 values" in note


def test_downsample_leaves_short_series_and_numbers_positions_without_timestamps():
    from itemsmith.items.rendering import downsample_item

    short = Item(question="q?", options=["a", "b"], answer_index=0, series=[Series(values=[1.0, 2.0, 3.0])])
    assert downsample_item(short, 3) == (short, "")
    long = Item(question="q?", options=["a", "b"], answer_index=0,
                series=[Series(values=[float(i) for i in range(100)])])
    shown, note = downsample_item(long, 10)
    kept = shown.series[0]
    assert kept.timestamps is not None and [float(t) for t in kept.timestamps] == kept.values  # their positions
    assert len(kept.values) == 10 and kept.values[0] == 0.0 and kept.values[-1] == 99.0 and "10 of 100" in note
    with pytest.raises(ValueError, match="at least 2"):
        downsample_item(long, 1)
