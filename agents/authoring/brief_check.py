"""Does a planned brief compute what it asks, from data the handler has? A cheap word-level check.

Small planners often write an `answer_from` that computes another quantity than the question asks
("What is the highest level?" answered by "mean of level"), asks for a time but computes a value,
reads another channel than the one asked about, names a column the data lacks, reads a column of
records() (a per-record label such as a count of rainy days) as if the series had it (in words or
through a building block, which only reads series), or calls a block as it cannot be called (each
literal block call is run on a window over the channel's profiled range, so the block's own checks
decide: a text where a number goes, a statistic it lacks) or with a threshold no value of the channel
reaches (the count is the same in every window, so no item can be drawn), or that calls
compare_windows (one statistic of a window minus another's) on several windows, as a planner writes
`compare` (which of several is more variable) under the other name. The words of the
title and question, and those of `answer_from`, are mapped to quantities (max, min, mean, count,
...); a brief fails when both sides name quantities and none of them agree. Paraphrases agree:
"peak" and "np.max" are both `max`, a count may be the sum of a comparison, a share its mean, a
range max minus min, a rise a change of means or a slope. Column names are taken out of the text
first, so `temp_max` is a column, not a maximum. The planner gets each problem back as the reason to
plan that brief again.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable

import numpy as np

from itemsmith.agents.authoring.models import Brief
from itemsmith.agents.profile import HandlerProfile
from itemsmith.items.blocks import ASKS_COMPARE, BLOCKS, WINDOW_BLOCKS, example_window, written_calls
from itemsmith.items.reasoning_blocks import USES
from itemsmith.verification.audit.quantities import agree, normal_text, quantities

_ASKS_TIME = re.compile(r"\bwhen\b|\b(which|what) (day|date|hour|time|month|year|week|minute|timestamp|sample|"
                        r"moment|weekday|season)s?\b|\bon which\b|\bat what\b")
_GIVES_TIME = re.compile(r"\b(argmax|argmin|idxmax|idxmin|index|date|dates|day|days|daily|time|times|timestamp|"
                         r"timestamps|hour|hours|hourly|minute|minutes|month|months|monthly|year|years|week|weeks|"
                         r"weekday|season|position|positions|when|datetime|moment|"
                         r"unusual|level.shift|seasonal.peak|volatility.regime)\b")  # blocks that answer with a time
_DATA_WORDS = re.compile(r"\b(series|values?|samples?|readings?|data|records?|labels?|channels?|observations?|"
                         r"measurements?|rows?)\b")
_SERIES = re.compile(r"\bseries\b")
_NOT_HISTORICAL = re.compile(r"\btoday\b|\bcurrent (date|time|day)\b|\bright now\b")
_NAMED_COLUMN = re.compile(r"\[\s*['\"]([^'\"\]]+)['\"]\s*\]|[`'\"]([\w ]+)[`'\"] columns?\b"
                           r"|\bcolumns? [`'\"]([\w ]+)[`'\"]")


_BLOCK_CALL = re.compile(rf"\b({'|'.join(BLOCKS)})\s*\(")
# compare_windows given take_windows(...): a planner's compare (which of several windows), under the other name
_COMPARES_SEVERAL = re.compile(r"\bcompare_windows\s*\([^)]*\btake_windows\b")
# a call of each window block that the check accepts, shown when a brief's call fails (an example the
# planner can copy; `t`: a threshold each item draws from its record)
EXAMPLE_CALLS = {"channel_stat": 'channel_stat(win, "max")', "count_beyond": "count_beyond(win, above=t)",
                 "change_between": "change_between(win, 0, -1)", "first_day": "first_day(win, above=t)",
                 **{use.block: use.call.format(others="take_windows(handler, win, 4)")
                    for use in reversed(USES) if use.block in WINDOW_BLOCKS}}


def _mentions(text: str, names: Iterable[str]) -> set[str]:
    """The names that occur in `text` as whole words (underscores and case ignored)."""
    return {name for name in names if normal_text(name) and re.search(rf"\b{re.escape(normal_text(name))}\b", text)}


def _without(text: str, names: Iterable[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        if normal_text(name):
            text = re.sub(rf"\b{re.escape(normal_text(name))}\b", " ", text)
    return text


def brief_problems(brief: Brief, profile: HandlerProfile) -> list[str]:
    """Why `brief.answer_from` does not compute what the brief asks from this data (empty: it does)."""
    columns = [c for c in profile.record_columns if c != "record_id"]
    channels = profile.channels
    known = set(columns) | set(channels)
    known_normal = {normal_text(c) for c in known}
    asked_text = normal_text(f"{brief.title} {brief.question}")
    answer_text = normal_text(brief.answer_from)
    problems: list[str] = []
    if _NOT_HISTORICAL.search(f"{asked_text} {answer_text}"):
        problems.append("the data is historical: never refer to today or the current date")
    named = {next(g for g in match.groups() if g) for match in _NAMED_COLUMN.finditer(brief.answer_from)}
    unknown = sorted(n for n in named if normal_text(n) not in known_normal and normal_text(n) != "record id")
    if unknown:
        problems.append(f"answer_from uses column {unknown[0]!r}, which the data does not have; its columns are "
                        f"{', '.join(sorted(known))}")
    labels_read = sorted(_mentions(answer_text, set(columns) - set(channels)))
    reads_series = _SERIES.search(answer_text) or _BLOCK_CALL.search(brief.answer_from)
    if labels_read and reads_series and not _mentions(answer_text, channels):
        problems.append(f"answer_from reads {labels_read[0]!r} from the series, but it is a column of records() "
                        f"(one value per record); the series columns are {', '.join(channels)}: compute the "
                        "answer from those")
    if not (_mentions(f"{asked_text} {answer_text}", known) or brief.columns or _DATA_WORDS.search(answer_text)):
        problems.append("answer_from names no data: say which column of records() or series() it computes from")
    if len(channels) >= 2:
        asked_channels = _mentions(asked_text, channels)
        read = _mentions(answer_text, channels)
        if asked_channels and read and not asked_channels & read:
            problems.append(f"the question asks about {', '.join(sorted(asked_channels))} but answer_from computes "
                            f"from {', '.join(sorted(read))}")
    asked = quantities(_without(asked_text, known))
    computed = quantities(_without(answer_text, known), answer=True)
    if asked and computed and not agree(asked, computed):
        problems.append(f"answer_from computes the {'/'.join(sorted(computed))} but the question asks for the "
                        f"{'/'.join(sorted(asked))}: make answer_from compute exactly what the question asks")
    problems += _block_call_problems(brief.answer_from, profile, _mentions(answer_text, channels))
    if _COMPARES_SEVERAL.search(brief.answer_from):
        problems.append(f"answer_from calls compare_windows on several windows (take_windows), but it subtracts a "
                        f"statistic of one window from another's: {ASKS_COMPARE}")
    if _ASKS_TIME.search(asked_text) and not _GIVES_TIME.search(answer_text):
        problems.append("the question asks for a time (when, which day) but answer_from computes a value: say "
                        "which index label or date it returns")
    return problems


def _block_call_problems(answer_from: str, profile: HandlerProfile, read: set[str]) -> list[str]:
    """Each window block `answer_from` calls with literal arguments (a drawn threshold `t` as the
    range's middle), run on a window holding the whole profiled range of the channels it reads: the
    block's own argument checks decide (a text where a number goes, a statistic it lacks, neither
    above= nor below=), and a threshold no value reaches (the count is 0, the day never comes, in
    every window) is sent back with the range."""
    span = profile.value_range(read)
    low, high = span or (0.0, 1.0)
    window = example_window(np.linspace(low, high, 9), channel="/".join(sorted(read)) or "value")
    problems = []
    for call in written_calls(answer_from):
        example = EXAMPLE_CALLS[call.name]
        if call.error is not None:
            problems.append(f"answer_from's {call.text[:80]} is no block call ({call.error}); write it like {example}")
            continue
        if call.args is None:
            continue  # a parameter the programmer picks: nothing to try
        block = WINDOW_BLOCKS[call.name]
        args, kwargs = call.arguments(drawn=profile.middle_value(read))
        try:
            bound = inspect.signature(block).bind(window, *args, **kwargs).arguments
            result = block(window, *args, **kwargs)
        except (TypeError, ValueError) as exc:
            problems.append(f"answer_from calls {call.text}, which fails: {exc}; write it like {example}")
            continue
        thresholded = "above" in bound or "below" in bound  # a reasoning block's None is its margin, not this
        if span and thresholded and (result is None or (call.name == "count_beyond" and result.value == 0)):
            never = f"is never under {low:g}" if bound.get("below") is not None else f"never exceeds {high:g}"
            outcome = "the count is always 0" if call.name == "count_beyond" else "there is never such a day"
            problems.append(f"{call.text} reads {', '.join(sorted(read))}, which {never} in the records seen: {outcome}; "
                            f"pick a threshold between {low:g} and {high:g}, or t (drawn for each item)")
    return problems
