"""Dates as users write them (verification.audit.dates): one moment in many spellings reads as one
period, free text yields the dates it names (and not the numbers that are no dates), a record's
timestamps become periods (a daily row is the whole day, a monthly row its month), and a date is
inside a span or not."""

from __future__ import annotations

import numpy as np
import pytest

from itemsmith.verification.audit.dates import (
    Timeline,
    When,
    dates_in,
    inside,
    looks_like_date,
    named_outside,
    read_when,
)

MARCH_11 = When(year=2013, month=3, day=11)


@pytest.mark.parametrize("text", ["2013-03-11", "2013-03-11T00:00:00", "Mar 11, 2013", "March 11 2013", "11 March 2013",
                                  "11 Mar 2013", "Monday, March 11, 2013", "11.03.2013", "2013/03/11", "2013.03.11",
                                  "11th of March, 2013", "  Mar. 11, 2013. "])
def test_one_day_in_many_spellings_is_one_period(text: str) -> None:
    spans = {w.date_only().span() for w in read_when(text)}
    assert MARCH_11.span() in spans


def test_a_numeric_date_that_reads_both_ways_has_both_readings() -> None:
    assert {(w.month, w.day) for w in read_when("03/11/2013")} == {(3, 11), (11, 3)}
    assert [(w.month, w.day) for w in read_when("11.03.2013")] == [(3, 11)]  # dots: day first


@pytest.mark.parametrize(("text", "expected"), [
    ("2013-03-11 14:00", When(2013, None, 3, 11, 14, 0)), ("2 pm", When(hour=14, minute=0)),
    ("14:30", When(hour=14, minute=30)), ("2013-03", When(2013, None, 3)), ("March 2013", When(2013, None, 3)),
    ("2013Q1", When(2013, 1)), ("Jul", When(month=7)), ("July.", When(month=7)), ("Mon", When(weekday=0)),
    ("Sept 3rd", When(month=9, day=3)),
])
def test_partial_and_coarse_moments(text: str, expected: When) -> None:
    assert read_when(text) == [expected]


@pytest.mark.parametrize("text", ["12.5", "3/4", "31/02/2013", "Monday, March 12, 2013", "hello", "2013", "25:61"])
def test_texts_that_are_no_date(text: str) -> None:
    assert read_when(text) == []


def test_a_bare_year_is_a_year_only_where_one_is_asked_for() -> None:
    assert read_when("2013", years=True) == [When(year=2013)]


def test_free_text_names_its_dates_and_not_its_numbers() -> None:
    text = ("What was the mean from 2013-03-03 to 2013-03-10, and on March 4, 2013 or 4 Mar 2013? In 2014, values "
            "above 2000 mm may rise 5 days; May 5 is a date; a ratio of 3/4 and 12.25 are not.")
    assert [m.text for m in dates_in(text)] == ["2013-03-03", "2013-03-10", "March 4, 2013", "4 Mar 2013", "2014",
                                                "May 5"]


def test_a_daily_record_row_is_its_whole_day_and_a_monthly_row_its_month() -> None:
    daily = Timeline.read([f"2013-03-{d:02d}T00:00:00" for d in range(4, 8)])
    assert daily is not None and daily.daily
    assert daily.rows(read_when("2013-03-05 16:00")[0]).tolist() == [1]  # a time on a daily row: that day
    assert daily.rows(read_when("Mar 5")[0]).tolist() == [1]  # no year: by its fields
    monthly = Timeline.read(["1949-01-01T00:00:00", "1949-02-01T00:00:00", "1949-03-01T00:00:00"])
    assert monthly is not None and monthly.rows(read_when("1949-02-15")[0]).tolist() == [1]
    month_ends = Timeline.read(["1949-01-31T00:00:00", "1949-02-28T00:00:00", "1949-03-31T00:00:00"])
    assert month_ends is not None and month_ends.rows(read_when("Feb 1949")[0]).tolist() == [1]
    hourly = Timeline.read([f"2013-03-04T{h:02d}:00:00" for h in range(24)])
    assert hourly is not None and len(hourly.rows(read_when("2013-03-04")[0])) == 24


def test_inside_a_span() -> None:
    start, end = np.datetime64("2013-03-04T00:00:00"), np.datetime64("2013-03-11T00:00:00")
    assert inside(read_when("2013-03-10")[0], start, end)
    assert not inside(read_when("2013-03-03")[0], start, end)
    assert inside(read_when("March 2013")[0], start, end) and not inside(read_when("April")[0], start, end)
    assert inside(read_when("Mar 5")[0], start, end) and inside(read_when("Friday")[0], start, end)


def test_named_outside_reads_question_and_options_and_honours_context() -> None:
    spans = [(np.datetime64("2013-03-04T00:00:00"), np.datetime64("2013-03-11T00:00:00"), np.timedelta64(86400, "s"))]
    question = "What was the mean from 2013-03-03 to 2013-03-10?"
    assert named_outside(question, ["1.0", "2.0"], None, spans) == [("the question", "2013-03-03")]
    assert named_outside(question, ["1.0", "2.0"], "The week starts on 2013-03-03.", spans) == []
    assert named_outside("On which day was it warmest?", ["Mar 5, 2013", "Mar 12, 2013"], None, spans) == \
        [("option 'Mar 12, 2013'", "Mar 12, 2013")]


def test_a_date_looking_text_in_an_unread_format_is_told_apart_from_a_label() -> None:
    assert looks_like_date("11|03|2013") and looks_like_date("day 70 of 2013")
    assert not looks_like_date("day 3") and not looks_like_date("t+1")
    assert not looks_like_date("115.2000") and not looks_like_date("2000.5 s")  # seconds of a recording


def test_a_time_named_more_finely_than_the_rows_may_lie_within_a_step() -> None:
    """Readings every 5 minutes from 05:01 to 08:56 are "between 05:00 and 09:00"; a day before a daily
    series, named at the series' own resolution, is not shown."""
    five_minutes = [(np.datetime64("2010-08-31T05:01:00"), np.datetime64("2010-08-31T08:56:01"),
                     np.timedelta64(300, "s"))]
    assert named_outside("Readings on 2010-08-31 between 05:00 and 09:00?", [], None, five_minutes) == []
    assert named_outside("Readings on 2010-08-31 between 04:50 and 09:00?", [], None, five_minutes) == \
        [("the question", "04:50")]
