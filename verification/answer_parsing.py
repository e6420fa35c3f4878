"""Parse a student's free-text reply to one final option letter.

Only letters are read, never option texts: a reply that copies every option scores nothing.
In order:

1. A final-answer cue: "Answer: (C)", "the answer is C", "final answer: c", "the correct option
   is B", "I choose D". The last cue in the reply wins, so "A? No, the answer is C" gives C; a
   cue naming alternatives ("Answer: C or D") is rejected.
2. A reply that is a bare letter ("C", "(c)", "C.").
3. Letters marked as options: an opening "C) because ..." or "C. ...", and "(C)", "C)",
   "option C" anywhere: accepted when they all name the same letter, rejected when they name
   several (a reply that restates the options names them all).

Markdown emphasis ("**C**") is ignored. A lowercase letter counts only when bracketed or not
followed by a word, so "the answer is a rising trend" is not read as A. A letter beyond the
item's options is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ParsedAnswer", "parse_answer"]

_LETTER = r"[\(\[]?\s*(?P<letter>[A-Fa-f])\s*(?P<close>[\)\]])?"
_AFTER_UPPER = r"(?![A-Za-z0-9])"
_CUES = [
    r"\banswer\s*(?:is|would\s+be|should\s+be|will\s+be)?\s*[:=\-]?\s*(?:option\s+|choice\s+)?",
    r"\b(?:correct|right|best|final)\s+(?:option|choice)\s*(?:is|would\s+be)?\s*[:=\-]?\s*",
    r"\b(?:i\s+(?:would\s+)?(?:choose|pick|select|go\s+with)|my\s+(?:choice|pick)\s+is)\s*(?:option\s+|choice\s+)?",
]
_CUE_RE = re.compile("(?:" + "|".join(_CUES) + ")" + _LETTER + _AFTER_UPPER, re.IGNORECASE)
_ALTERNATIVE_RE = re.compile(r"^\s*(?:or|and|/|,)\s*(?:option\s+)?[\(\[]?\s*[A-Fa-f]\s*[\)\]]?(?![A-Za-z0-9])",
                             re.IGNORECASE)
_BARE_RE = re.compile(r"^\s*[\(\[]?\s*([A-Fa-f])\s*[\)\]]?\s*[.:!]?\s*$")
_OPENING_RE = re.compile(r"^\s*(?:[\(\[]\s*([A-Fa-f])\s*[\)\]]|([A-F])[\).:]|([a-f])\))(?:\s|$)")
_MARKED_RE = re.compile(r"[\(\[]\s*([A-Fa-f])\s*[\)\]]|(?<![A-Za-z0-9])([A-F])\)|\boption\s+([A-F])(?![A-Za-z0-9])",
                        re.IGNORECASE)
_EMPHASIS_RE = re.compile(r"[*_`~]+")


@dataclass(frozen=True)
class ParsedAnswer:
    """The chosen option (``index`` 0-based, ``letter``) or None, and how it was read or why not."""

    index: int | None
    letter: str | None
    how: str

    @property
    def parsed(self) -> bool:
        return self.index is not None


def _word_follows(text: str, end: int) -> bool:
    return bool(re.match(r"\s+[A-Za-z]", text[end:]))


def _cue_letter(text: str) -> tuple[str | None, str | None]:
    """The letter of the last usable final-answer cue, or a rejection reason."""
    for match in reversed(list(_CUE_RE.finditer(text))):
        letter = match.group("letter")
        if letter.islower() and match.group("close") is None and _word_follows(text, match.end()):
            continue  # "the answer is a rising trend": an article, not the option
        if _ALTERNATIVE_RE.match(text[match.end():]):
            return None, f"the final-answer cue names alternatives: {text[match.start():match.end() + 12].strip()!r}"
        return letter.upper(), None
    return None, None


def parse_answer(reply: str, n_options: int) -> ParsedAnswer:
    """Read one final answer letter from ``reply`` for an item with ``n_options`` options."""
    if not 1 <= n_options <= 6:
        raise ValueError(f"n_options must be 1..6, got {n_options}")
    text = _EMPHASIS_RE.sub("", reply or "").strip()
    if not text:
        return ParsedAnswer(None, None, "empty reply")

    letter, rejection = _cue_letter(text)
    how = "final-answer cue"
    if rejection:
        return ParsedAnswer(None, None, rejection)
    if letter is None and (bare := _BARE_RE.match(text)):
        letter, how = bare.group(1).upper(), "bare letter"
    if letter is None:
        marked = {next(g for g in m.groups() if g).upper() for m in _MARKED_RE.finditer(text)}
        if (opening := _OPENING_RE.match(text)) is not None:
            marked.add(next(g for g in opening.groups() if g).upper())
        if len(marked) > 1:
            return ParsedAnswer(None, None, f"names several letters ({', '.join(sorted(marked))}) "
                                            "without a final-answer cue")
        if marked:
            letter, how = marked.pop(), "opening letter" if opening else "only letter marked"
    if letter is None:
        return ParsedAnswer(None, None, "no answer letter found")
    index = ord(letter) - ord("A")
    if index >= n_options:
        return ParsedAnswer(None, letter, f"letter {letter} is not among the {n_options} options")
    return ParsedAnswer(index, letter, how)
