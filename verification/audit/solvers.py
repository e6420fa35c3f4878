"""The blind solvers: each answers an item from its question and option texts only.

A solver is fitted on the items of the seeds drawn before and answers the items of the next
seed (held out), so what it learns (a favourite position, a favourite rank, answer texts that
recur) is tested on items it never saw. Each entry in `SOLVERS` also says, for the author, what
a high score means and how to fix it.
"""

from __future__ import annotations

import base64
import codecs
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.dates import CALENDAR_NAME
from itemsmith.verification.audit.features import (
    format_signature,
    numeric_values,
    plain_number,
    tie_break,
    tokens,
    wording,
)
from itemsmith.verification.audit.learned import fit_learned

__all__ = ["SOLVERS", "STATIC_SOLVERS", "Solver"]

Predict = Callable[[Item], "int | None"]


@dataclass(frozen=True)
class Solver:
    """`fit(train)` returns a predictor (an option index, or None to abstain) and a short note
    of what it learned; `shortcut` and `fix` become the author's feedback when it wins.

    `held_out`: which items it is tested on. "content": items it was not fitted on (the next seed's,
    repeats of training items left out). "record": items of records no training item named. A
    solver that remembers texts (keys, question wordings, statement words) would otherwise answer
    a small pool's recurring items from what it learned of their records' data, which is reading the
    data, not a cue; on records it never saw only a cue that holds whatever the data wins."""

    name: str
    fit: Callable[[Sequence[Item]], tuple[Predict, str]]
    shortcut: str
    fix: str
    held_out: Literal["content", "record"] = "content"


def _dense_ranks(keys: Sequence[float]) -> list[int]:
    distinct = sorted(set(keys))
    return [distinct.index(k) for k in keys]


def _learned_rank(rank_of: Callable[[Item], list[int] | None], describe: Callable[[int, int], str]
                  ) -> Callable[[Sequence[Item]], tuple[Predict, str]]:
    """A solver that learns which rank (of the options under `rank_of`) the key holds most often,
    per number of distinct ranks, and answers the option holding that rank."""

    def fit(train: Sequence[Item]) -> tuple[Predict, str]:
        counts: dict[int, Counter[int]] = defaultdict(Counter)
        for item in train:
            ranks = rank_of(item)
            if ranks is not None:
                counts[max(ranks) + 1][ranks[item.answer_index]] += 1
        best = {levels: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for levels, c in counts.items()}

        def predict(item: Item) -> int | None:
            ranks = rank_of(item)
            if ranks is None or max(ranks) + 1 not in best:
                return None
            want = best[max(ranks) + 1]
            return tie_break(item, [i for i, r in enumerate(ranks) if r == want])

        notes: list[str] = []
        for levels, c in sorted(counts.items(), key=lambda kv: -sum(kv[1].values()))[:2]:
            share = c[best[levels]] / sum(c.values())
            note = f"{describe(best[levels], levels)} in {share:.0%} of training items"
            if note not in notes:
                notes.append(note)
        return predict, "; ".join(notes)

    return fit


def _position_ranks(item: Item) -> list[int] | None:
    return list(range(len(item.options)))


def _shape(option: str) -> str:
    """An option's format with its value masked: numbers (sign and digits, decimals kept), month and
    weekday names."""
    return CALENDAR_NAME.sub("M", format_signature(option))


def _length_ranks(item: Item) -> list[int] | None:
    """Ranks of the options' lengths, where length can say something besides the value: not over
    options that are values written in one format ("-1.25 %" is longer than "0.50 %", "May" shorter
    than "September", because of what they are: the numeric and the pool solvers read that), nor
    over True/False."""
    if item.kind is ItemKind.tf or len({_shape(o) for o in item.options}) == 1:
        return None
    ranks = _dense_ranks([len(o.strip()) for o in item.options])
    return ranks if max(ranks) > 0 else None


def _numeric_ranks(item: Item) -> list[int] | None:
    values = numeric_values(item)
    return _dense_ranks(values) if values is not None and len(values) >= 3 else None


def _ordinal(rank: int, levels: int) -> str:
    if rank == levels - 1:
        return "the largest"
    if rank == 0:
        return "the smallest"
    return f"rank {rank + 1} of {levels} (from the smallest)"


def _fit_centre(train: Sequence[Item]) -> tuple[Predict, str]:
    def predict(item: Item) -> int | None:
        values = numeric_values(item)
        if values is None or len(values) < 3:
            return None
        total = sum(values)
        n = len(values)
        gaps = [abs(v - (total - v) / (n - 1)) for v in values]
        low = min(gaps)
        return tie_break(item, [i for i, g in enumerate(gaps) if g <= low * (1 + 1e-9)])
    return predict, "answers the numeric option closest to the mean of the others"


def _fit_overlap(train: Sequence[Item]) -> tuple[Predict, str]:
    def predict(item: Item) -> int | None:
        asked = tokens(item.question)
        scores = [len(asked & tokens(o)) for o in item.options]
        top = max(scores)
        if top == 0 or scores.count(top) == len(scores):
            return None
        return tie_break(item, [i for i, s in enumerate(scores) if s == top])
    return predict, "answers the option sharing the most words with the question"


def _fit_odd_format(train: Sequence[Item]) -> tuple[Predict, str]:
    def predict(item: Item) -> int | None:
        signatures = [format_signature(o) for o in item.options]
        counts = Counter(signatures)
        if len(item.options) < 3 or len(counts) != 2:
            return None
        (common, n_common), (odd, n_odd) = counts.most_common()
        if n_odd != 1:
            return None
        return signatures.index(odd)
    return predict, "answers the one option formatted unlike the others (decimals, units, wording)"


def _fit_memorization(train: Sequence[Item]) -> tuple[Predict, str]:
    keyed: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    for item in train:
        if item.kind is ItemKind.tf:
            continue
        for option in item.options:
            shown[option.strip().casefold()] += 1
        keyed[item.answer.strip().casefold()] += 1

    def predict(item: Item) -> int | None:
        # only options that were keys before count: the cue is a recurring answer, not a
        # distractor's range (that one belongs to the numeric solvers)
        if item.kind is ItemKind.tf:
            return None
        texts = [o.strip().casefold() for o in item.options]
        rates = [(keyed[t] + 0.5) / (shown[t] + 2.0) if keyed[t] else None for t in texts]
        known = [r for r in rates if r is not None]
        if not known:
            return None
        top = max(known)
        return tie_break(item, [i for i, r in enumerate(rates) if r == top])

    repeats = [t for t, n in keyed.most_common(3) if n > 1]
    note = f"most frequent keys in training: {', '.join(repr(t) for t in repeats)}" if repeats else "no repeated keys"
    return predict, note


def _fit_tf_wording(train: Sequence[Item]) -> tuple[Predict, str]:
    by_wording: dict[Hashable, Counter[int]] = defaultdict(Counter)
    for item in train:
        if item.kind is ItemKind.tf:
            by_wording[wording(item.question)][item.answer_index] += 1

    def predict(item: Item) -> int | None:
        if item.kind is not ItemKind.tf:
            return None
        seen = by_wording.get(wording(item.question))
        if not seen or seen[0] == seen[1]:
            return None
        return 0 if seen[0] > seen[1] else 1

    skewed = sum(1 for c in by_wording.values() if sum(c.values()) >= 3 and min(c[0], c[1]) == 0)
    return predict, f"{len(by_wording)} statement wordings, {skewed} always keyed the same way"


def _base64(raw: bytes) -> list[str]:
    """The base64 characters that `raw` alone decides wherever it sits in a longer encoded text: at each
    of the three byte offsets, less the characters shared with the bytes before or after it."""
    forms = []
    for offset, first in ((0, 0), (1, 2), (2, 3)):
        encoded = base64.b64encode(bytes(offset) + raw).decode().rstrip("=")
        forms.append(encoded[first:len(encoded) - (1 if (offset + len(raw)) % 3 else 0)])
    return forms


def _encoded(text: str) -> tuple[list[str], list[str]]:
    """`text` as a template could smuggle it past a reader, long enough that no plain word is one by
    chance: (reversed, base64 or rot13; hexadecimal or base32, which may be written with separators)."""
    raw = text.encode()
    forms = [text[::-1], *_base64(raw), codecs.encode(text, "rot13")]
    spaced = [raw.hex(), base64.b32encode(raw).decode().rstrip("=")]
    return ([f.casefold() for f in forms if len(f) >= 4 and f != text],
            [f.casefold() for f in spaced if len(f) >= 4 and f != text])


def _stated(item: Item) -> list[int]:
    """The options whose text, or whose number as written, the question or the context states, plainly
    or encoded (`_encoded`)."""
    said = " ".join(f"{item.question} {item.context or ''}".split()).casefold()
    packed = re.sub(r"[^0-9a-z]", "", said)  # "34:31:2e:32" is the hexadecimal "34312e32"
    numbers = set(re.findall(r"-?\d+(?:\.\d+)?", said))
    hits = []
    for i, option in enumerate(item.options):
        text = " ".join(option.split()).casefold()
        number = plain_number(option)
        written = None if number is None else f"{number[0]:.{number[1]}f}"
        forms, spaced = _encoded(" ".join(option.split()))
        if (len(text) >= 2 and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", said)) or written in numbers \
                or any(form in said for form in forms + spaced) \
                or any(form in packed for form in spaced if len(form) >= 8):  # short ones occur by chance
            hits.append(i)
    return hits


_ISO_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\b")
_TEXT_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\b")


def _text_numbers(item: Item) -> list[float]:
    said = _TEXT_DATE.sub(" ", f"{item.question} {item.context or ''}")
    return [float(n.replace(",", "")) for n in re.findall(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?", said)]


def _calendar_words(option: str) -> set[str] | None:
    """The weekday and month names (and their three-letter forms) of an ISO date option."""
    found = _ISO_DATE.match(option)
    if found is None:
        return None
    try:
        day = date(*map(int, found.groups()))
    except ValueError:
        return None
    names = {f"{day:%A}".lower(), f"{day:%B}".lower()}
    return names | {n[:3] for n in names}


def _paraphrased(item: Item) -> int | None:
    """The one option the text gives away without stating it: a date whose weekday or month the text
    names (and no other option's), a number that is the ratio, product, sum or difference of two
    numbers the text states, else the number nearest one the text states."""
    words = set(re.findall(r"[a-z]+", f"{item.question} {item.context or ''}".lower()))
    calendars = [_calendar_words(o) for o in item.options]
    if all(c is not None for c in calendars):
        named = [i for i, c in enumerate(calendars) if c and c & words and not any(
            (c & words) <= other for j, other in enumerate(calendars) if j != i and other)]
        return named[0] if len(named) == 1 else None
    values = [plain_number(o) for o in item.options]
    stated = _text_numbers(item)
    if not stated or any(v is None for v in values):
        return None
    derived = {f(a, b) for a in stated for b in stated if a != b
               for f in (lambda x, y: x / y if y else math.nan, lambda x, y: x * y, lambda x, y: x + y,
                         lambda x, y: x - y)}
    exact = [i for i, v in enumerate(values) if v is not None
             and any(abs(d - v[0]) <= 0.5 * 10.0 ** -v[1] + 1e-9 for d in derived if math.isfinite(d))]
    if len(exact) == 1:
        return exact[0]
    gaps = [min(abs(v[0] - n) for n in stated) for v in values if v is not None]
    nearest = min(range(len(gaps)), key=gaps.__getitem__)
    return nearest if sorted(gaps)[1] > gaps[nearest] else None


def _fit_paraphrased(train: Sequence[Item]) -> tuple[Predict, str]:
    return (lambda item: None if item.kind is ItemKind.tf else _paraphrased(item)), \
        "answers the option the text gives away without stating it (a date's weekday or month it names, " \
        "a number derived from or nearest to the numbers it states)"


def _short_tokens(item: Item) -> set[str]:
    return set(re.findall(r"(?<!\w)\w{1,3}(?!\w)", f"{item.question} {item.context or ''}"))


def _fit_position_token(train: Sequence[Item]) -> tuple[Predict, str]:
    """A short token of the text (a letter, a digit, a code) that came with one key position in
    training: the text tells where the key is, in a code a reader need not understand."""
    seen: dict[str, Counter[int]] = defaultdict(Counter)
    for item in train:
        if item.kind is not ItemKind.tf:
            for token in _short_tokens(item):
                seen[token][item.answer_index] += 1
    telling = {token: position for token, c in seen.items() for position, n in c.most_common(1)
               if n >= 3 and n >= 0.9 * sum(c.values())}

    def predict(item: Item) -> int | None:
        if item.kind is ItemKind.tf:
            return None
        told = {telling[t] for t in _short_tokens(item) if t in telling}
        return told.pop() if len(told) == 1 and next(iter(told)) < len(item.options) else None

    return predict, f"{len(telling)} short tokens of the text came with one key position in training"


def _fit_stated(train: Sequence[Item]) -> tuple[Predict, str]:
    def predict(item: Item) -> int | None:
        if item.kind is ItemKind.tf:
            return None
        hits = _stated(item)
        return hits[0] if len(hits) == 1 else None
    return predict, "answers the one option the question or context states"


def _asked(item: Item) -> str:
    return " ".join(item.question.split()).casefold()


def _fit_question_memory(train: Sequence[Item]) -> tuple[Predict, str]:
    keyed: dict[str, Counter[str]] = defaultdict(Counter)
    for item in train:
        keyed[_asked(item)][item.answer.strip().casefold()] += 1

    # a question text remembered with its key: asked at least twice, with one key at least half the time
    # (a question asked every time with another key, "What is the total?", has nothing to remember)
    remembered = {text: answer for text, c in keyed.items()
                  for answer, n in c.most_common(1) if n >= 2 and 2 * n >= sum(c.values())}

    def predict(item: Item) -> int | None:
        answer = remembered.get(_asked(item))
        texts = [o.strip().casefold() for o in item.options]
        return texts.index(answer) if answer in texts else None

    return predict, f"{len(remembered)} of {len(keyed)} question texts in training came back with the same key"


SOLVERS: tuple[Solver, ...] = (
    Solver("position", _learned_rank(_position_ranks, lambda r, n: f"the key is option {r + 1} of {n}"),
           "the key's position among the options is predictable",
           "let mc_item shuffle the options (pass the correct answer and the distractors; never reorder them)"),
    Solver("length_rank", _learned_rank(_length_ranks, lambda r, n: f"the key is {_ordinal(r, n)} by length"
                                        .replace("the largest by length", "the longest")
                                        .replace("the smallest by length", "the shortest")),
           "the key is predictable from the options' lengths (e.g. always the longest or the shortest)",
           "make distractors the same kind of text as the key: same wording, same units, same precision"),
    Solver("numeric_rank", _learned_rank(_numeric_ranks, lambda r, n: f"the key is {_ordinal(r, n)} numeric option"),
           "the key's rank among the sorted numeric options is predictable (e.g. always the middle one)",
           "draw the key's rank uniformly: build the options with numeric_options(correct, spread=..., decimals=...) "
           "(or date_options(...)), never fixed offsets like answer + d for d in (-3, 3, 6)"),
    Solver("centre", _fit_centre,
           "the key is the numeric option closest to the mean of the others (distractors are spread around it)",
           "place the key at a uniformly random rank with asymmetric distractors: numeric_options(correct, "
           "spread=..., decimals=...) or date_options(...)"),
    Solver("word_overlap", _fit_overlap,
           "the key repeats words of the question",
           "word distractors like the key: reuse the question's terms in every option, or in none"),
    Solver("memorization", _fit_memorization,
           "answer texts that were keys on other records come back as keys (a fixed set of answers, or keys on a "
           "grid the distractors are not on)",
           "compute the key from the data shown each time and draw the distractors from the key's own "
           "distribution: the same statistic of other windows, or numeric_options(..., step=the data's step) when "
           "the data moves in fixed steps (whole counts, converted units)", held_out="record"),
    Solver("odd_format", _fit_odd_format,
           "the key is the one option formatted differently (e.g. an unrounded key among rounded distractors)",
           "format the key and the distractors identically: numeric_options(correct, decimals=...) rounds all of them"),
    Solver("tf_wording", _fit_tf_wording,
           "true/false statements with the same wording are almost always keyed the same way",
           "for each statement wording, make it true about half the time (draw the claim, then build the series)",
           held_out="record"),
    Solver("stated_in_text", _fit_stated,
           "the key's text or number is written in the question or the context",
           "never state the answer (or a paraphrase of it) in the question or context; if the text must quote "
           "numbers, quote the distractors' as often as the key's"),
    Solver("paraphrased_in_text", _fit_paraphrased,
           "the text gives the key away without stating it: it names the key date's weekday or month, states "
           "numbers whose ratio, product, sum or difference is the key, or a number the key lies nearest",
           "say nothing in the question or context that is computed from the answer (a total and a count give "
           "the mean; 'just under 14' gives the option nearest 14)"),
    Solver("position_token", _fit_position_token,
           "a short token of the question or context (a letter, a digit, a code) tells the key's position",
           "never write anything into the text that depends on where the key is (no codes, letters or hints "
           "derived from the answer)"),  # a record's data says nothing of where the shuffled key sits
    Solver("question_memory", _fit_question_memory,
           "a question text asked of other records comes back with the same key (the key does not follow the data)",
           "compute the key from the data shown each time, and let the question name what it is about (record, "
           "window, threshold)", held_out="record"),
    Solver("learned", fit_learned,
           "a model fitted on earlier seeds' items answers later seeds' from the option and question texts alone "
           "(cues such as the key nearest a round number, the only odd last digit, distractors that are "
           "multiples of the key, the key's words in the question, statement words or thresholds that give a "
           "true/false item's truth)",
           "make the key indistinguishable from the distractors by everything but the data: numeric_options / "
           "date_options (or other records' answers) for the options, statements made true or false 50/50 per "
           "wording and threshold, and no answer words in the question", held_out="record"),
)


def _fit_key_in_question(train: Sequence[Item]) -> tuple[Predict, str]:
    def predict(item: Item) -> int | None:
        asked = " ".join(item.question.casefold().split())
        inside = [i for i, o in enumerate(item.options)
                  if len(o.strip()) >= 3 and " ".join(o.casefold().split()) in asked]
        return inside[0] if len(inside) == 1 else None
    return predict, "answers the one option whose text the question contains"


# Solvers for a fixed set of items (an imported benchmark, `audit.static`; the position priors of a
# group's other items are in `audit.position_prior`): the key written into the question.
STATIC_SOLVERS: tuple[Solver, ...] = (
    Solver("key_in_question", _fit_key_in_question,
           "the question spells out the key's text (and no other option's)",
           "word the question without the answer, or mention every option in it"),
)
