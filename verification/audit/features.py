"""What a blind solver may look at: the question and the option texts, never the series.

Numbers, dates and times in option texts become comparable values; formats become signatures
(digits masked, decimals kept) so an unrounded key among rounded distractors stands out.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date
from functools import lru_cache

from itemsmith.items.schema import Item
from itemsmith.verification.audit.dates import dates_in, read_when
from itemsmith.verification.audit.units import canonical_unit

__all__ = [
    "canonical", "content_key", "denotation", "format_signature", "numeric_values", "option_value", "overlapping",
    "plain_number", "tie_break", "tokens", "wording", "words_besides_numbers",
]

_DATE = re.compile(r"^\D*?(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?\D*$")
_TIME = re.compile(r"^\D*?(\d{1,2}):(\d{2})\D*$")
_NUMBER = re.compile(r"[-+\u2212]?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[a-z][a-z']{2,}")
_NUMBERISH = re.compile(r"\d+(?:[.,:/-]\d+)*")
_STOPWORDS = frozenset(
    "the and for with that this what which from are was were its has have had not but than then into "
    "over under per each one two series value values data day days time does did how many much".split())


# words an option may hold besides its number and still state a quantity ("12.3 mm/day", "day 17",
# "about 40 beats"); more ("Time series 1 with flip anomaly") make it a description that holds a number
_MAX_QUANTITY_WORDS = 3


def words_besides_numbers(text: str) -> tuple[str, ...]:
    """The words of a text once its numbers are taken out ("Series 1 with trend" -> series, with, trend)."""
    return tuple(re.findall(r"[^\W\d_]+", _NUMBER.sub(" ", text.casefold())))


@lru_cache(maxsize=65536)
def option_value(text: str) -> float | None:
    """A number for an option that states exactly one quantity: a date (its ordinal, plus the
    time of day), a clock time (minutes) or a single number with at most a few words (a unit, "day");
    None otherwise."""
    text = text.strip()
    if m := _DATE.match(text):
        try:
            day = date(int(m[1]), int(m[2]), int(m[3])).toordinal()
        except ValueError:
            return None
        minutes = int(m[4]) * 60 + int(m[5]) if m[4] else 0
        return day + minutes / 1440
    if m := _TIME.match(text):
        return int(m[1]) * 60 + int(m[2])
    number = plain_number(text)
    if number is None or len(words_besides_numbers(text)) > _MAX_QUANTITY_WORDS:
        return None
    return number[0]


def plain_number(text: str) -> tuple[float, int] | None:
    """(value, decimals written) of a text that states one plain number, not a date or a clock time."""
    text = text.strip()
    if _DATE.match(text) or _TIME.match(text):
        return None
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1:
        return None
    number = numbers[0].replace(",", "").replace("\u2212", "-")
    try:
        return float(number), len(number.lower().partition("e")[0].partition(".")[2])
    except ValueError:
        return None


def numeric_values(item: Item) -> list[float] | None:
    """The options' values when every option states one comparable quantity, else None."""
    values = [option_value(o) for o in item.options]
    if any(v is None for v in values) or len(set(values)) < len(values):
        return None
    return values  # type: ignore[return-value]


def _mask_number(match: re.Match[str]) -> str:
    text = match.group(0)
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return "N" + ("." + "d" * decimals if decimals else "")


@lru_cache(maxsize=65536)
def format_signature(text: str) -> str:
    """The option's format with every number masked but its decimals kept:
    "12.35 mm" -> "N.dd mm", "12.3 mm" -> "N.d mm", "-4 days" -> "N days"."""
    return _NUMBER.sub(_mask_number, " ".join(text.split()).casefold())


def tokens(text: str) -> frozenset[str]:
    """Content words of a text (casefolded, three letters or more, no stop words)."""
    return frozenset(w for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS)


def wording(text: str) -> str:
    """A statement with its numbers, dates and quoted names masked: items built from the same
    sentence share a wording."""
    text = _NUMBERISH.sub("#", " ".join(text.split()).casefold())
    return re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)


def canonical(item: Item, *, with_key: bool = True) -> str:
    """The item as canonical JSON; without the key it identifies "the same item" across runs
    (options as a set: a reshuffle is the same item)."""
    data = item.model_dump(mode="json", exclude={"metadata", "rationale", "answer_index"})
    if with_key:
        data["answer"] = item.answer
    else:
        data["options"] = sorted(item.options)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def content_key(item: Item) -> str:
    """sha1 of the item without its key (dictionary key for duplicates and key consistency)."""
    return hashlib.sha1(canonical(item, with_key=False).encode("utf-8")).hexdigest()


def tie_break(item: Item, candidates: list[int]) -> int:
    """A fixed choice among tied options, derived from the item text, independent of the key."""
    if len(candidates) == 1:
        return candidates[0]
    digest = hashlib.sha1((item.question + "\x00" + "\x00".join(sorted(item.options))).encode()).digest()
    ordered = sorted(candidates, key=lambda i: item.options[i])
    return ordered[int.from_bytes(digest[:4], "big") % len(ordered)]


_ARTICLES = re.compile(r"^(?:a|an|the)\s+")
_CONNECTORS = re.compile(r"^[\s,;:()\-–—]*(?:(?:from|to|through|thru|until|till|and|between|-|–|—)[\s,;:()\-–—]*)*$", re.I)
Denotation = tuple[object, ...]


_PERCENT = frozenset({"%", "percent", "per cent"})


def denotation(option: str, *, years: bool = False) -> Denotation:
    """What an option says once its spelling is set aside: a moment ("2013-03-04" and "Mar 4, 2013", "Jul"
    and "July"), a run of moments ("Mar 4 - Mar 10, 2013"), an amount with its unit ("0.50" and "0.5",
    "12 °C" and "12 degC", "11.4%" and the share "0.114"), or a label (case, spacing, hyphens, articles and end punctuation aside). Two
    options with one denotation say the same thing."""
    whens = read_when(option, years=years)
    if whens:
        return ("when", frozenset(whens))
    mentions = dates_in(option)
    if mentions:
        rest = option
        for mention in reversed(mentions):
            rest = rest[:mention.start] + " " + rest[mention.start + len(mention.text):]
        if _CONNECTORS.fullmatch(rest):
            return ("whens", tuple(frozenset(m.readings) for m in mentions))
    number = plain_number(option)
    words = words_besides_numbers(option)
    if number is not None and len(words) <= _MAX_QUANTITY_WORDS:
        rest = _NUMBER.sub(" ", option.strip().rstrip(".")).strip()
        unit = canonical_unit(rest)
        written = unit.name if unit is not None else " ".join(rest.casefold().split())
        if written in _PERCENT:  # "11.4%" is the share 0.114
            return ("amount", round(number[0] / 100, 12), "")
        return ("amount", round(number[0], 12), written)
    label = " ".join(re.sub(r"[^\w%+<>=]+", " ", option.casefold().replace("_", " ")).split())
    return ("label", _ARTICLES.sub("", label))


def overlapping(a: Denotation, b: Denotation) -> bool:
    """Whether two denotations say the same thing, or one moment holds the other ("2013-03" holds
    "2013-03-15", "2013-03-04" holds "2013-03-04 00:00")."""
    if a == b:
        return True
    if a[0] != "when" or b[0] != "when":
        return False
    spans_a = [w.span() for w in a[1]]  # type: ignore[attr-defined]
    spans_b = [w.span() for w in b[1]]  # type: ignore[attr-defined]
    if any(s is None for s in spans_a + spans_b):
        return bool(set(a[1]) & set(b[1]))  # type: ignore[arg-type]
    return any((x[0] <= y[0] and y[1] <= x[1]) or (y[0] <= x[0] and x[1] <= y[1])
               for x in spans_a for y in spans_b)  # type: ignore[index]
