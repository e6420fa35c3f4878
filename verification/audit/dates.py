"""Dates and times as users write them, read into comparable periods.

A timestamp, an option or a phrase in a question may write one moment in many ways: "2013-03-11",
"2013-03-11 14:00", "2013-03-11T14:00:00+00:00", "Mar 11, 2013", "11 March 2013", "Monday, March 11",
"11.03.2013", "03/11/2013" (read both ways), "2013-03", "March 2013", "2013Q1", "14:00", "2 pm",
"July", "Mon". `read_when(text)` reads a whole text into its readings (`When`: the fields written,
the rest unknown); `dates_in(text)` finds the dates a free text names. A `When` with its year is a
period (`span`); without, it is matched field by field. `Timeline` is a record's or a channel's
timestamps as periods: which rows a `When` names, and whether it lies inside the span shown.

Pure and model-free: the audit's fidelity, date and option checks share it.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = ["CALENDAR_NAME", "Mention", "Span", "Timeline", "When", "dates_in", "inside", "looks_like_date", "named_outside", "read_when"]

_MONTHS = {name: i for i, names in enumerate(
    [(), ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")]) for name in names}
_WEEKDAYS = {name: i for i, names in enumerate(
    [("mon", "monday"), ("tue", "tues", "tuesday"), ("wed", "wednesday"), ("thu", "thur", "thurs", "thursday"),
     ("fri", "friday"), ("sat", "saturday"), ("sun", "sunday")]) for name in names}

# a month or weekday name, whole, as any of the spellings above ("May", "Sept.", "Mon")
CALENDAR_NAME = re.compile(rf"\b(?:{'|'.join(sorted({**_MONTHS, **_WEEKDAYS}, key=len, reverse=True))})\b\.?", re.I)

_MON = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
       r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WD_NAME = r"(?P<wd>mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|" \
           r"sat(?:urday)?|sun(?:day)?)\.?"
_WD = rf"(?:{_WD_NAME},?\s+)?"
_DAY = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>\d{4})"
_CLOCK = r"(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?(?:\s*(?P<ampm>[ap])\.?m\.?)?"
_ZONE = r"(?:z|[+-]\d{2}:?\d{2}|\s*utc)?"
_TIME = rf"(?:(?:t|,?\s+(?:at\s+)?){_CLOCK}{_ZONE})?"
_HOUR = r"(?P<h>\d{1,2})\s*(?P<ampm>[ap])\.?m\.?"

# the forms, longest first; each a regex with the same group names
_FORMS: tuple[str, ...] = (
    rf"{_WD}{_YEAR}-(?P<m>\d{{1,2}})-{_DAY}{_TIME}",
    rf"{_WD}{_YEAR}(?P<ysep>[/.])(?P<m>\d{{1,2}})(?P=ysep){_DAY}{_TIME}",
    rf"{_WD}(?P<a>\d{{1,2}})(?P<sep>[/.-])(?P<b>\d{{1,2}})(?P=sep){_YEAR}{_TIME}",
    rf"{_WD}{_MON}\s+{_DAY}(?:,?\s+{_YEAR})?{_TIME}",
    rf"{_WD}{_DAY}\s+(?:of\s+)?{_MON}(?:,?\s+{_YEAR})?{_TIME}",
    rf"{_MON},?\s+{_YEAR}",
    rf"{_YEAR}\s*-?\s*q(?P<q>[1-4])",
    rf"q(?P<q>[1-4])\s+{_YEAR}",
    rf"{_YEAR}[-/](?P<m>\d{{2}})(?![-/]?\d)",
    rf"{_CLOCK}{_ZONE}",
    _HOUR,
)
# forms read only where a whole text is one date (an option, a timestamp): alone, they are ordinary words
_WHOLE_ONLY: tuple[str, ...] = (_MON, _WD_NAME, _YEAR)
_FULL = [re.compile(rf"\s*(?:{form})\s*", re.I) for form in (*_FORMS, *_WHOLE_ONLY)]
_SEARCH = [re.compile(rf"(?<![\w.:/-])(?:{form})(?![\w:/-]|[.,]\d)", re.I) for form in _FORMS]
# a year alone in free text is one the item claims to show only after "in", "during", "of", "for" ("in 2013";
# "listed since 1980" is background)
_YEAR_IN_TEXT = re.compile(r"\b(?:in|during|of|for|throughout|year)\s+(?P<y>(?:19|20)\d{2})"
                           r"(?![\w:/%-]|[.,]\d|\s*(?:mm|cm|m|km|kg|g|%|°|usd|eur)\b)", re.I)
_PLAIN_ISO = re.compile(r"\d{4}-\d{2}(?:-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?)?")
_DATEISH = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|(?<![\d.,])(?:19|20)\d{2}(?![\d.,])|\b(?:jan|feb|mar|apr|may|"
                      r"jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.I)


@dataclass(frozen=True)
class When:
    """A moment as written: the fields a text gives (None: not said)."""

    year: int | None = None
    quarter: int | None = None
    month: int | None = None
    day: int | None = None
    hour: int | None = None
    minute: int | None = None
    second: int | None = None
    weekday: int | None = None  # 0 = Monday

    @property
    def dated(self) -> bool:
        """Whether it names a calendar period (a year, a month or a day), not only a clock time or a weekday."""
        return self.year is not None or self.month is not None or self.quarter is not None

    def span(self) -> tuple[np.datetime64, np.datetime64] | None:
        """[start, end) of the period it names, when its year is given."""
        return _span(self)

    def _period(self) -> tuple[np.datetime64, np.datetime64] | None:
        if self.year is None or (self.day is not None and self.month is None):
            return None
        month = self.month or (3 * self.quarter - 2 if self.quarter else 1)
        try:
            start = datetime(self.year, month, self.day or 1, self.hour or 0, self.minute or 0, self.second or 0)
        except ValueError:
            return None
        if self.second is not None:
            end = start + timedelta(seconds=1)
        elif self.minute is not None:
            end = start + timedelta(minutes=1)
        elif self.hour is not None:
            end = start + timedelta(hours=1)
        elif self.day is not None:
            end = start + timedelta(days=1)
        else:
            months = 1 if self.month else 3 if self.quarter else 12
            total = start.year * 12 + start.month - 1 + months
            end = datetime(total // 12, total % 12 + 1, 1)
        return np.datetime64(start, "s"), np.datetime64(end, "s")

    def resolution(self) -> np.timedelta64:
        """How finely it names a moment: a second, a minute, an hour, a day, a month or longer."""
        for name, seconds in (("second", 1), ("minute", 60), ("hour", 3600), ("day", 86400), ("weekday", 86400),
                              ("month", 28 * 86400), ("quarter", 90 * 86400)):
            if getattr(self, name) is not None:
                return np.timedelta64(seconds, "s")
        return np.timedelta64(365 * 86400, "s")

    def date_only(self) -> When:
        return replace(self, hour=None, minute=None, second=None)

    def text(self) -> str:
        if (span := self.span()) is not None:
            start = pd.Timestamp(span[0])
            if self.day is None:
                return f"{start:%Y-%m}" if self.month else f"{start.year}Q{self.quarter}" if self.quarter else str(self.year)
            return f"{start:%Y-%m-%d %H:%M}" if self.hour is not None else f"{start:%Y-%m-%d}"
        parts = [calendar.month_abbr[self.month] if self.month else "", str(self.day or ""),
                 f"{self.hour:02d}:{self.minute or 0:02d}" if self.hour is not None else "",
                 calendar.day_abbr[self.weekday] if self.weekday is not None and self.month is None else ""]
        return " ".join(p for p in parts if p)


@lru_cache(maxsize=65536)
def _span(when: When) -> tuple[np.datetime64, np.datetime64] | None:
    return when._period()


def _hour(match: re.Match[str]) -> tuple[int | None, int | None, int | None]:
    groups = match.groupdict()
    if groups.get("h") is None:
        return None, None, None
    hour = int(groups["h"])
    if groups.get("ampm"):
        if not 1 <= hour <= 12:
            return -1, None, None
        hour = hour % 12 + (12 if groups["ampm"].lower() == "p" else 0)
    minute = int(groups["mi"]) if groups.get("mi") else None
    second = int(groups["s"]) if groups.get("s") else None
    return hour, minute if minute is not None else (0 if groups.get("ampm") else None), second


def _readings(match: re.Match[str]) -> list[When]:
    """The `When`s a matched form can mean (two for 03/04/2013), valid ones only."""
    g = match.groupdict()
    hour, minute, second = _hour(match)
    if hour == -1 or (hour is not None and not 0 <= hour <= 23) or (minute is not None and not 0 <= minute <= 59):
        return []
    year = int(g["y"]) if g.get("y") else None
    weekday = _WEEKDAYS[g["wd"].lower().rstrip(".")] if g.get("wd") else None
    month = _MONTHS[g["mon"].lower().rstrip(".")] if g.get("mon") else int(g["m"]) if g.get("m") else None
    day = int(g["d"]) if g.get("d") else None
    quarter = int(g["q"]) if g.get("q") else None
    pairs: list[tuple[int | None, int | None]] = [(month, day)]
    if g.get("a"):  # 11.03.2013 is day-first; 03/11/2013 may be either
        a, b = int(g["a"]), int(g["b"])
        pairs = [(b, a)] if g["sep"] == "." else [(b, a), (a, b)]
    out: list[When] = []
    for m, d in dict.fromkeys(pairs):
        when = When(year, quarter, m, d, hour, minute, second, weekday)
        if m is not None and not 1 <= m <= 12 or d is not None and not 1 <= d <= 31:
            continue
        if year is not None and m is not None and d is not None:
            try:
                real = datetime(year, m, d)
            except ValueError:
                continue
            if weekday is not None and real.weekday() != weekday:
                continue  # "Monday, March 12, 2013" names no day
        elif m is not None and d is not None and d > calendar.monthrange(2000, m)[1]:
            continue
        out.append(when)
    return out


def read_when(text: str, *, years: bool = False) -> list[When]:
    """The readings of a text that is one date or time as a whole (empty: it is not one). A bare
    four-digit number is a year only with `years` (where the question asks for a year)."""
    return list(_read_when(text, years))


@lru_cache(maxsize=65536)
def _read_when(text: str, years: bool) -> tuple[When, ...]:
    text = text.strip().strip("\"'()[]").rstrip(".,;:!?").strip()
    if not text or len(text) > 48:
        return ()
    for pattern in _FULL:
        if (match := pattern.fullmatch(text)) is None:
            continue
        if pattern is _FULL[-1] and not years:
            return ()
        return tuple(_readings(match))
    return ()


@dataclass(frozen=True)
class Mention:
    """A date a free text names: where, as written, and its readings."""

    text: str
    start: int
    readings: tuple[When, ...]


def dates_in(text: str) -> list[Mention]:
    """The dates and times a free text names, left to right (one mention per stretch of text)."""
    found: list[tuple[int, int, list[When]]] = []
    for pattern in _SEARCH:
        for match in pattern.finditer(text):
            mon = match.groupdict().get("mon")
            if mon is not None and mon == "may":  # the verb; the month is written "May"
                continue
            if (readings := _readings(match)) and not any(s < match.end() and match.start() < e for s, e, _ in found):
                found.append((match.start(), match.end(), readings))
    for match in _YEAR_IN_TEXT.finditer(text):
        start = match.start("y")
        if not any(s < match.end() and start < e for s, e, _ in found):
            found.append((start, match.end(), [When(year=int(match["y"]))]))
    return [Mention(text[s:e], s, tuple(r)) for s, e, r in sorted(found, key=lambda f: f[0])]


def looks_like_date(text: str) -> bool:
    """Whether a text that is no date `read_when` reads still looks like one (a year, a month name,
    digits with date separators): a timestamp written in a format the audit does not read."""
    return bool(_DATEISH.search(text))


def _month_index(stamp: np.datetime64) -> int:
    return int(stamp.astype("datetime64[M]").astype(int))


class Timeline:
    """Timestamps as periods: one [start, end) per row. Instants at midnight that step by days,
    months or years stand for their day, month or year (a daily record's row is the whole day)."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self.starts = starts.astype("datetime64[s]")
        self.ends = ends.astype("datetime64[s]")
        self._fields: dict[str, np.ndarray] | None = None
        self.daily = bool(len(self) and ((self.ends - self.starts) >= np.timedelta64(1, "D")).all())
        # rows one after another without overlap: the rows of many periods are found at once
        self._ordered = bool(len(self) < 2 or (self.starts[1:] >= self.ends[:-1]).all())

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def read(cls, texts: Sequence[str]) -> Timeline | None:
        """The timeline of timestamp texts (None: one of them is no date or time `read_when` reads)."""
        if not texts:
            return None
        if all(_PLAIN_ISO.fullmatch(text) for text in texts):  # numpy reads these ~30 times faster than pandas
            return cls.of_instants(np.array(list(texts), dtype="datetime64[s]"))
        try:
            parsed = pd.to_datetime(pd.Index(list(texts)), format="ISO8601")
            starts = (parsed.tz_localize(None) if parsed.tz is not None else parsed).to_numpy("datetime64[s]")
            return cls.of_instants(starts)
        except (ValueError, TypeError, OverflowError):
            pass
        spans = []
        for text in texts:
            read = [span for w in read_when(text) if (span := w.span()) is not None]
            if len(read) != 1:
                return None
            spans.append(read[0])
        return cls(np.array([s for s, _ in spans]), np.array([e for _, e in spans]))

    @classmethod
    def of_instants(cls, starts: np.ndarray) -> Timeline:
        starts = starts.astype("datetime64[s]")
        days = starts.astype("datetime64[D]")
        if len(starts) and (starts == days).all():
            step = np.median(np.diff(days).astype(int)) if len(days) > 1 else 1
            months = days.astype("datetime64[M]")
            if step >= 360 and (days == months.astype("datetime64[Y]").astype("datetime64[D]")).all():
                return cls(starts, (months.astype("datetime64[Y]") + 1).astype("datetime64[s]"))
            if step >= 28 and (days == months.astype("datetime64[D]")).all():
                return cls(starts, (months + 1).astype("datetime64[s]"))
            after = days + 1
            if step >= 28 and (after == after.astype("datetime64[M]").astype("datetime64[D]")).all():  # month ends
                return cls(months.astype("datetime64[s]"), after.astype("datetime64[s]"))
            return cls(starts, (days + 1).astype("datetime64[s]"))
        return cls(starts, starts + np.timedelta64(1, "s"))

    def _field(self, name: str) -> np.ndarray:
        if self._fields is None:
            index = pd.DatetimeIndex(self.starts)
            self._fields = {"year": index.year.to_numpy(), "month": index.month.to_numpy(),
                            "quarter": index.quarter.to_numpy(), "day": index.day.to_numpy(),
                            "hour": index.hour.to_numpy(), "minute": index.minute.to_numpy(),
                            "second": index.second.to_numpy(), "weekday": index.weekday.to_numpy()}
        return self._fields[name]

    def rows_of_each(self, whens: Sequence[When]) -> list[np.ndarray]:
        """`rows` of each moment (at once when they all name periods and the rows are in order)."""
        spans = [span for when in whens if (span := (when.date_only() if self.daily else when).span()) is not None]
        if not self._ordered or len(spans) != len(whens):
            return [self.rows(when) for when in whens]
        first = np.searchsorted(self.ends, np.array([a for a, _ in spans], dtype="datetime64[s]"), side="right")
        last = np.searchsorted(self.starts, np.array([b for _, b in spans], dtype="datetime64[s]"), side="left")
        return [np.arange(a, b) for a, b in zip(first.tolist(), last.tolist(), strict=True)]

    def rows(self, when: When) -> np.ndarray:
        """The rows whose period overlaps the one `when` names (by its fields where it has no year)."""
        if self.daily:
            when = when.date_only()
        if (span := when.span()) is not None:
            return np.flatnonzero((self.starts < span[1]) & (span[0] < self.ends))
        mask = np.ones(len(self), dtype=bool)
        for name in ("quarter", "month", "day", "hour", "minute", "second", "weekday"):
            if (value := getattr(when, name)) is not None:
                mask &= self._field(name) == value
        return np.flatnonzero(mask)

    def bounds(self) -> tuple[np.datetime64, np.datetime64]:
        return self.starts.min(), self.ends.max()

    def step(self) -> np.timedelta64:
        """The median step between rows (zero for one row)."""
        if len(self) < 2:
            return np.timedelta64(0, "s")
        return np.median(np.diff(np.sort(self.starts)).astype("timedelta64[s]").astype(np.int64)).astype(
            np.int64).astype("timedelta64[s]")


def inside(when: When, start: np.datetime64, end: np.datetime64) -> bool:
    """Whether the moment `when` names lies (at least partly) inside [start, end)."""
    if (span := when.span()) is not None:
        return bool(span[0] < end and start < span[1])
    first, last = pd.Timestamp(start), pd.Timestamp(end - np.timedelta64(1, "s"))
    if not when.dated:  # a clock time or a weekday: inside unless the span is shorter than its cycle
        if when.weekday is not None and when.hour is None:
            return (last.normalize() - first.normalize()).days >= 6 or any(
                (first + pd.Timedelta(days=k)).weekday() == when.weekday
                for k in range((last.normalize() - first.normalize()).days + 1))
        if when.hour is None:
            return True
        if (last - first) >= pd.Timedelta(days=1):
            return True
        clock = when.hour * 60 + (when.minute or 0)
        low, high = first.hour * 60 + first.minute, last.hour * 60 + last.minute
        return low <= clock <= high if first.date() == last.date() else clock >= low or clock <= high
    for year in range(first.year, min(last.year, first.year + 200) + 1):
        if inside(replace(when, year=year), start, end):
            return True
    return False


_ASKS_YEAR = re.compile(r"\byears?\b", re.I)


Span = tuple[np.datetime64, np.datetime64, np.timedelta64]  # [start, end) and the step between the rows shown


def named_outside(question: str, options: Sequence[str], context: str | None,
                  spans: Sequence[Span]) -> list[tuple[str, str]]:
    """The dates the question and the options name that lie outside every span shown and that the
    context does not declare, as (where, the date as written). A moment named more finely than the
    rows are sampled may lie up to one step outside ("between 05:00 and 09:00" over readings every 5
    minutes from 05:01 to 08:56); one named at the rows' own resolution may not (a day before a
    daily series)."""
    declared = {w for m in dates_in(context or "") for w in m.readings}
    years = bool(_ASKS_YEAR.search(question))
    found: list[tuple[str, str]] = []
    texts = [("the question", dates_in(question))]
    for option in options:
        whole = read_when(option, years=years)
        texts.append((f"option {option!r}", [Mention(option.strip(), 0, tuple(whole))] if whole else dates_in(option)))
    for where, mentions in texts:
        for mention in mentions:
            if context and mention.text in context or declared & set(mention.readings):
                continue
            if not any(inside(w, a - slack, b + slack) for w in mention.readings for a, b, step in spans
                       for slack in [step if w.resolution() < step else np.timedelta64(0, "s")]):
                found.append((where, mention.text))
    return found
