"""Checks on the drawn items themselves: every item shows its data, the declared number of
options, options that say different things, dates the text names that are the ones shown, keys that
agree across runs, no option the question's own wording rules out, keys that are the statistic the
question asks for (and no other option is), keys that are another statistic of the series than the
question asks for, true/false keys that are their statement's truth on the series shown. How many different items a template makes is a property, not a check (`pool`)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.dates import Span, Timeline, named_outside
from itemsmith.verification.audit.features import (
    content_key,
    denotation,
    option_value,
    overlapping,
    plain_number,
)
from itemsmith.verification.audit.models import Finding, ItemDraw
from itemsmith.verification.audit.quantities import STATISTICS, agree, normal_text, quantities
from itemsmith.verification.audit.recompute import APPROXIMATELY, Recomputed, data_decimals, label_ties, recompute
from itemsmith.verification.audit.statements import statement_truths
from itemsmith.verification.settings import AuditConfig

__all__ = ["ITEM_CHECKS", "STATIC_ITEM_CHECKS", "STATISTICAL_CHECKS", "Drawn", "check_items", "short"]


def short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Drawn:
    """The draws with each item's content key (computed once per audit)."""

    draws: Sequence[ItemDraw]
    keys: list[list[str]]
    _recomputed: dict[int, Recomputed | None] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, draws: Sequence[ItemDraw]) -> Drawn:
        return cls(draws, [[content_key(i) for i in d.items] for d in draws])

    @property
    def items(self) -> list[Item]:
        return [item for draw in self.draws for item in draw.items]

    @property
    def all_keys(self) -> list[str]:
        return [k for keys in self.keys for k in keys]

    def recomputed(self, item: Item) -> Recomputed | None:
        """`recompute(item)`, once per item (two checks read it)."""
        if id(item) not in self._recomputed:
            self._recomputed[id(item)] = recompute(item)
        return self._recomputed[id(item)]


def _shows_series(drawn: Drawn, config: AuditConfig) -> Finding:
    missing = [item for item in drawn.items if not item.series]
    if not missing:
        return Finding(check="shows_series", passed=True, message="every item shows its data")
    return Finding(check="shows_series", passed=False,
                   message=f"{len(missing)} of {len(drawn.items)} items show no series, e.g. "
                           f"{short(missing[0].question)!r}: every item must show the data it asks about")


def _option_count(drawn: Drawn, config: AuditConfig) -> Finding:
    bad: Counter[str] = Counter()
    for item in drawn.items:
        declared = item.metadata.get("n_options")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != len(item.options):
            bad[f"{len(item.options)} options where the item declares {declared}"] += 1
        elif declared is None and item.kind is not ItemKind.tf and len(item.options) < config.min_options:
            bad[f"{len(item.options)} options (at least {config.min_options} expected)"] += 1
    if not bad:
        return Finding(check="option_count", passed=True, message="every item has its declared number of options")
    what, n = bad.most_common(1)[0]
    return Finding(check="option_count", passed=False,
                   message=f"{sum(bad.values())} items have the wrong number of options, e.g. {n} with {what}; "
                           f"give mc_item {config.min_options - 1} distractors (numeric_options(..., n="
                           f"{config.min_options}) builds them)")


_ASKS_YEAR = re.compile(r"\byears?\b", re.I)


def _distinct_options(drawn: Drawn, config: AuditConfig) -> Finding:
    """Two options that say the same thing once spelling is set aside ("Jul" and "July", "2013-03-04" and
    "Mar 4, 2013", "0.50" and "0.5", "Upward trend" and "upward-trend.") are both right or both wrong."""
    for item in drawn.items:
        years = bool(_ASKS_YEAR.search(item.question))
        said = [denotation(o, years=years) for o in item.options]
        for i, a in enumerate(said):
            j = next((j for j in range(i + 1, len(said)) if overlapping(a, said[j])), None)
            if j is not None:
                return Finding(check="distinct_options", passed=False,
                               message=f"two options say the same thing: {item.options[i]!r} and {item.options[j]!r} "
                                       f"in {short(item.question)!r}; write every option in one format (one date "
                                       "format, one month spelling, the same decimals) and draw distractors that "
                                       "differ from the key after that formatting")
    return Finding(check="distinct_options", passed=True, message="options say different things")


def _channel_spans(item: Item) -> list[Span]:
    """The time each channel with readable timestamps covers, with the step between its points (a
    weekly total labelled by its Sunday covers the Monday before: a day is finer than its step)."""
    spans = []
    for s in item.series:
        if s.timestamps and (timeline := Timeline.read(s.timestamps)) is not None:
            spans.append((*timeline.bounds(), timeline.step()))
    return spans


def _dates_shown(drawn: Drawn, config: AuditConfig) -> Finding:
    """A date or a range the question or an option names is a timestamp shown or lies inside the time
    shown, unless the item's context declares it (a forecast's target date): "from 2013-03-03 to
    2013-03-10" over a series shown from 2013-03-04 names a day the reader never sees."""
    bad: list[tuple[Item, str, str, list[Span]]] = []
    told = 0
    for item in drawn.items:
        spans = _channel_spans(item)
        if not spans:
            continue
        told += 1
        outside = named_outside(item.question, item.options, item.context, spans)
        if outside:
            bad.append((item, *outside[0], spans))
    if not bad:
        return Finding(check="dates_shown", passed=True,
                       message=f"the dates {told} items name are the ones their series show")
    item, where, named, spans = bad[0]
    shown = "; ".join(f"{str(a)[:16].replace('T', ' ').removesuffix(' 00:00')} to "
                      f"{str(b - np.timedelta64(1, 's'))[:16].replace('T', ' ').removesuffix(' 23:59')}"
                      for a, b, _ in spans[:2])
    return Finding(check="dates_shown", passed=False,
                   message=f"{len(bad)} of {told} items name a date their series do not show, e.g. "
                           f"{short(item.question)!r}: {where} names {named!r}, but the series shown cover {shown}; "
                           "name the first and last timestamps shown (dates[0], dates[-1] of the window the key is "
                           "computed on), draw date options inside it (date_options(..., low=dates[0], "
                           "high=dates[-1])), or, for a date the question needs beyond the data (a forecast's "
                           "target), declare it in context=")


def _key_consistency(drawn: Drawn, config: AuditConfig) -> Finding:
    keys: dict[str, set[str]] = defaultdict(set)
    example: dict[str, Item] = {}
    for item, k in zip(drawn.items, drawn.all_keys, strict=True):
        keys[k].add(item.answer)
        example.setdefault(k, item)
    clashes = [k for k, answers in keys.items() if len(answers) > 1]
    if not clashes:
        return Finding(check="key_consistency", passed=True, message="identical items always have the same key")
    item = example[clashes[0]]
    return Finding(check="key_consistency", passed=False,
                   message=f"{len(clashes)} items appear with different keys in different runs (seeds or "
                           f"num_samples), e.g. {short(item.question)!r} keyed {sorted(keys[clashes[0]])}; "
                           "the key must depend only on the item's data, never on num_samples or the run")


@dataclass(frozen=True)
class Contradiction:
    """An option the question's own wording rules out."""

    question: re.Pattern[str]
    option: Callable[[str, str], bool]  # (option, question): the question rules the option out
    why: str


def _is_zero(option: str, question: str) -> bool:
    return option_value(option) == 0


def _is_fraction(option: str, question: str) -> bool:
    value = option_value(option)
    return value is not None and not float(value).is_integer()


# A count of things ("how many days", "the number of beats") is a whole number. Seen in a real run:
# "How many days were there with precipitation?" keyed with the window's mean precipitation, 2.35,
# which the structure check, the audit's solvers and a 1.5B judge panel all passed.
_COUNTED = (r"(?:days?|hours?|minutes?|weeks?|months?|years?|times?|samples?|readings?|records?|values?|points?|"
            r"observations?|measurements?|peaks?|troughs?|spikes?|crossings?|events?|beats?|heartbeats?|cycles?|"
            r"steps?|occurrences?|items?|runs?|streaks?|changes?|rises?|drops?)")
_ASKS_COUNT = re.compile(rf"^(?!.*\b(?:average|averaged|mean|per|rate)\b).*(?:\bhow many (?:of (?:these|the|those) )?"
                         rf"(?:\w+ )?{_COUNTED}\b|\bnumber of (?:\w+ )?{_COUNTED}\b)", re.I | re.S)  # an average count may be a fraction

# A time ("when", "on which day") is a date, a clock time or a position ("day 12"), never an amount.
# Seen in a real run: "When did precipitation reach its maximum?" keyed with the maximum, "12.35 mm/day".
_ASKS_TIME = re.compile(r"(?:^|[.?!:]\s+)when (?:did|was|were|is|are|does|do)\b|\b(?:on|at|in|during|between) which "
                        r"(?:\w+ )?(?:days?|dates?|times?|hours?|minutes?|weeks?|years?)\b|\bwhat (?:date|time|day)\b",
                        re.I)
_AMOUNT_UNIT = re.compile(r"\d\s*(?:mm|cm|km|m|°\w?|deg(?:rees?)?(?: ?[CF])?|%|kg|g|mg|l|ml|bpm|mph|"
                          r"m/s|km/h|hpa|mmhg|kwh|kw|w|usd|eur)(?:/\w+)?(?:\s|$)", re.I)


_TIME_UNIT = r"ms|s|secs?|seconds?|min|minutes?|h|hrs?|hours?"
_IN_TIME_UNIT = re.compile(rf"(-?\d+(?:\.\d+)?)\s*({_TIME_UNIT})\b", re.I)


def _a_stated_time(option: str, question: str) -> bool:
    """An option "54.381 s" under a question that states its stretch in that unit ("from 54.311 s to
    57.122 s") and within it: a time since the recording's start, not an amount. A number merely
    written with a time unit ("12.35 s" under "when did it rain most?") is no time the question names."""
    match = _IN_TIME_UNIT.fullmatch(option.strip())
    if match is None:
        return False
    stated = [float(n) for n, unit in _IN_TIME_UNIT.findall(question) if unit.casefold() == match[2].casefold()]
    return len(stated) >= 2 and min(stated) <= float(match[1]) <= max(stated)


def _an_amount(option: str, question: str) -> bool:
    """A number written with decimals or with a unit of measure: an amount, not a time (unless it is
    a time in the unit and within the stretch the question states)."""
    number = plain_number(option)
    return number is not None and not _a_stated_time(option, question) and (
        number[1] > 0 or bool(_AMOUNT_UNIT.search(option)))


CONTRADICTIONS: tuple[Contradiction, ...] = (
    Contradiction(re.compile(r"\b(with|after|at) an? (delay|lag)\b|\bdelayed\b|\blagged\b|\bnon-?zero lag\b", re.I),
                  _is_zero, "offers a zero lag under a question that says there is a delay"),
    Contradiction(re.compile(r"\bnon-?zero\b", re.I), _is_zero, "offers zero under a question that says non-zero"),
    Contradiction(_ASKS_COUNT, _is_fraction, "offers a fractional number under a question that asks for a count (a "
                  "count is a whole number: compute the count the question asks for, e.g. int((values > 0).sum()))"),
    Contradiction(_ASKS_TIME, _an_amount, "offers an amount under a question that asks for a time (answer with the "
                  "time itself: dates[int(np.argmax(values))], with date_options for the distractors)"),
)


def _contradictions(drawn: Drawn, config: AuditConfig) -> Finding:
    for item in drawn.items:
        for rule in CONTRADICTIONS:
            if rule.question.search(item.question):
                hit = next((o for o in item.options if rule.option(o, item.question)), None)
                if hit is not None:
                    return Finding(check="contradicted_option", passed=False,
                                   message=f"an item {rule.why}: option {hit!r} in {short(item.question)!r}; "
                                           "drop options the question itself excludes (a solver eliminates them)")
    return Finding(check="contradicted_option", passed=True, message="no option contradicts its question")


def _recomputed(item: Item) -> tuple[set[str], set[str]] | None:
    """(quantities the question asks for, statistics of a series shown that the key equals after
    its own rounding), or None when the item cannot be told: no statistic asked, a true/false item,
    options that are not all plain numbers or that are labels ("series 1" to "series 4")."""
    question = normal_text(item.question)
    for name in {normal_text(s.name) for s in item.series} - {""}:  # `temp_max` names a channel, not a max
        question = re.sub(rf"\b{re.escape(name)}\b", " ", question)
    asked = quantities(question)
    shown = [np.asarray(s.values, dtype=float) for s in item.series if len(s.values) >= 5]
    if not asked & STATISTICS.keys() or item.kind is ItemKind.tf or not shown:
        return None
    numbers = [number for o in item.options if (number := plain_number(o)) is not None]
    if len(numbers) != len(item.options):
        return None
    stated = sorted(value for value, _ in numbers)
    if stated in ([float(i) for i in range(len(stated))], [float(i) for i in range(1, len(stated) + 1)]):
        return None
    key, decimals = numbers[item.answer_index]
    return asked, {name for name, statistic in STATISTICS.items() for values in shown
                   if any(abs(x - key) <= 0.5 * 10.0 ** -decimals + 1e-9 for x in statistic(values))}


def _key_answers_the_question(drawn: Drawn, config: AuditConfig) -> Finding:
    """Keys that are another statistic of a series shown than the question asks for (the mean
    under "how many days" or "the highest"), on at least half the items that can be told: a
    template computing the wrong quantity does so on every item, while small whole numbers (a lag
    of 5 days, "day 11") equal some statistic of some series by chance on about a third of them
    (the curated lag templates: 23 and 32 %)."""
    told, wrong, example = 0, 0, None
    for item in drawn.items:
        found = _recomputed(item)
        if found is None:
            continue
        asked, key = found
        told += 1
        if key and not agree(asked, key):
            wrong += 1
            example = example or (item, asked, key)
    if wrong < config.min_mismatched_keys or 2 * wrong < told or example is None:
        return Finding(check="key_statistic", passed=True,
                       message=f"{wrong} of {told} keys that can be recomputed are another statistic of a series "
                               "shown than their question asks for")
    item, asked, statistics = example
    return Finding(check="key_statistic", passed=False,
                   message=f"{wrong} of {told} items whose key can be recomputed are keyed with another statistic "
                           f"of a series shown than the question asks for, e.g. {short(item.question)!r} keyed "
                           f"{item.answer!r}, the {'/'.join(sorted(statistics))} where it asks for the "
                           f"{'/'.join(sorted(asked & STATISTICS.keys()))}; compute what the question asks for (or "
                           "ask for what the answer is)")


def _too_many_wrong(wrong: int, told: int, config: AuditConfig) -> bool:
    """Whether `wrong` of `told` recomputed keys fail a template: at least `min_mismatched_keys`, and
    more than `max_unmatched_key_share` of them."""
    return wrong >= config.min_mismatched_keys and wrong > config.max_unmatched_key_share * told


def _key_is_the_statistic(drawn: Drawn, config: AuditConfig) -> Finding:
    """Keys that are not the statistic the question asks for of any series shown (the other way
    round from `key_statistic`: a key computed on another window, another column, the whole record
    or with a bug is no statistic of the data shown at all). A sound template's key is that
    statistic on every item the audit can recompute; a share over `max_unmatched_key_share` fails,
    over all items or within one run (a template keyed wrong only at larger num_samples)."""
    told, unmatched, example = 0, 0, None
    worst_run: tuple[int, int, int] | None = None  # (unmatched, told, num_samples) of the worst run
    for draw in drawn.draws:
        run_told = run_unmatched = 0
        for item in draw.items:
            found = drawn.recomputed(item)
            if found is None:
                continue
            run_told += 1
            if not found.matched:
                run_unmatched += 1
                example = example or (item, found)
        told, unmatched = told + run_told, unmatched + run_unmatched
        if _too_many_wrong(run_unmatched, run_told, config) \
                and (worst_run is None or run_unmatched * worst_run[1] > worst_run[0] * run_told):
            worst_run = (run_unmatched, run_told, draw.num_samples)
    overall = _too_many_wrong(unmatched, told, config)
    if example is None or not (overall or worst_run):
        return Finding(check="key_is_statistic", passed=True,
                       message=f"{told - unmatched} of {told} keys that can be recomputed are the statistic their "
                               "question asks for of a series shown")
    item, found = example
    what = {"amount": "value", "position": "position", "time": "time", "calendar": "period"}[found.kind]
    readings = sorted({round(v, 6) for v in found.values})
    near = sorted(readings, key=lambda v: abs(v - found.key))[:3]
    where = "" if overall or worst_run is None else \
        f" (in the run with num_samples={worst_run[2]}: {worst_run[0]} of {worst_run[1]})"
    return Finding(check="key_is_statistic", passed=False,
                   message=f"{unmatched} of {told} items whose key can be recomputed{where} are keyed with a {what} "
                           f"that is not the {'/'.join(sorted(found.asked))} of any series shown, e.g. "
                           f"{short(item.question)!r} keyed {item.answer!r} where the series shown give "
                           f"{', '.join(found.read(v) for v in near)}; compute the key from exactly the "
                           "values shown "
                           "(the same window, column and records as series=[...]), for every num_samples")


def _too_close(item: Item, found: Recomputed, others: list[tuple[int, float]]) -> list[int]:
    """Under "approximately/about/roughly/around/nearly", options closer to the key than the precision
    the question grants: one unit of the data's last decimal, and three units of the key's own (a
    reader told "approximately 0.83" may be a unit or two off: 0.85 is as right, 0.86 is not)."""
    if not APPROXIMATELY.search(item.question):
        return []
    decimals = data_decimals(item)
    granted = max(6 * found.tolerance, 0.0 if decimals is None else 10.0 ** -decimals)  # tolerance: half a unit
    return [i for i, value in others if abs(value - found.key) < granted * (1 - 1e-6)]


def _ambiguous_keys(drawn: Drawn, config: AuditConfig) -> Finding:
    """A key whose statistic another option also satisfies: the reading that matches the key (a
    maximum reached on two days that are both options, a value two options round to), or the
    precision the question states ("approximately" over options closer than the data's precision)."""
    bad: list[tuple[Item, list[int]]] = []
    told = 0
    for item in drawn.items:
        found = drawn.recomputed(item)
        if found is None or not found.matched:
            if ties := label_ties(item):  # "which week had the most rainy days?" over channels that tie
                told += 1
                bad.append((item, ties))
            continue
        told += 1
        others = found.also_right()
        if found.kind == "amount" and found.asked - {"count", "share"}:
            values = [(i, o[0]) for i, o in enumerate(found.options) if o is not None and i != found.key_index]
            others = sorted(set(others) | set(_too_close(item, found, values)))
        if others:
            bad.append((item, others))
    if not bad:
        return Finding(check="ambiguous_key", passed=True,
                       message=f"no other option is also right on the {told} items whose key can be recomputed")
    item, others = bad[0]
    approximately = APPROXIMATELY.search(item.question)
    why = f"at the precision the question states ({approximately[0]!r} over data written to {data_decimals(item)} " \
          "decimals)" if approximately else "as the data shows it"
    return Finding(check="ambiguous_key", passed=False,
                   message=f"{len(bad)} of {told} items have another option that is also right {why}, e.g. "
                           f"{short(item.question)!r} keyed {item.answer!r} where "
                           f"{', '.join(repr(item.options[i]) for i in others)} is too; skip items whose statistic "
                           "is tied (two days share the maximum), draw distractors that differ from the key by more "
                           "than the rounding shown, and under 'approximately' space options at least three units of "
                           "their last decimal (and one of the data's) apart, or ask for the exact value")


def _statement_is_true(drawn: Drawn, config: AuditConfig) -> Finding:
    """True/false keys that are not the truth of their statement on the series shown under any of
    its readings (`statements`): a template that tests the claim on another channel, window or record
    than the statement names is wrong on every item where the two differ."""
    told, wrong, example = 0, 0, None
    for item in drawn.items:
        truths = statement_truths(item)
        if truths is None:
            continue
        told += 1
        if (item.answer.strip().casefold() == "true") not in truths:
            wrong += 1
            example = example or (item, truths)
    if example is None or not _too_many_wrong(wrong, told, config):
        return Finding(check="statement_truth", passed=True,
                       message=f"{told - wrong} of {told} true/false statements that can be recomputed are keyed "
                               "with their truth on the series shown")
    item, truths = example
    return Finding(check="statement_truth", passed=False,
                   message=f"{wrong} of {told} true/false statements that can be recomputed are keyed against their "
                           f"truth on the series shown, e.g. {short(item.question)!r} keyed {item.answer!r} where the "
                           f"series shown make it {next(iter(truths))}; test the statement on exactly the series "
                           "shown (the channel, window and records it names)")


ITEM_CHECKS: tuple[Callable[[Drawn, AuditConfig], Finding], ...] = (
    _shows_series, _option_count, _distinct_options, _dates_shown, _key_consistency,
    _contradictions, _key_answers_the_question, _key_is_the_statistic, _ambiguous_keys, _statement_is_true,
)


# The checks that mean the same on a fixed set of items as on draws of a template (the others count
# draws, seeds or sizes; the static audit has its own duplicate and series checks, `audit.static`).
STATIC_ITEM_CHECKS: tuple[Callable[[Drawn, AuditConfig], Finding], ...] = (
    _option_count, _distinct_options, _dates_shown, _key_consistency, _contradictions, _key_answers_the_question,
    _ambiguous_keys, _statement_is_true,
)


# Checks that fail on a share of the items rather than on one item that shows the flaw: a failure must
# replicate on fresh seeds (`core.confirm_rejection`) before it rejects.
STATISTICAL_CHECKS = frozenset({"key_statistic", "key_is_statistic", "statement_truth"})


def check_items(drawn: Drawn, config: AuditConfig) -> list[Finding]:
    return [check(drawn, config) for check in ITEM_CHECKS]
