"""The answer rule of ``itemsmith release evaluate``, shipped with the lm-eval and Inspect exports
as ``itemsmith_answers.py``: `verification.answer_parsing` word for word (a reply read to one
option letter: the last final-answer cue, a bare letter, or the one letter marked as an option,
as in "A) day 4"), plus lm-eval's ``process_results`` over it. Both tools then score a chat
model's reply the way itemsmith does."""

from __future__ import annotations

from importlib.resources import files

__all__ = ["ANSWER_MODULE", "answer_module"]

ANSWER_MODULE = "itemsmith_answers.py"

_LM_EVAL_HOOK = '''

def process_results(doc: dict, results: list) -> dict:
    """lm-eval's ``process_results``: 1 when the reply, read as itemsmith reads it, names the key."""
    parsed = parse_answer(results[0], len(doc["options"]))
    return {"acc": float(parsed.index == doc["answer_index"])}
'''


def answer_module() -> str:
    """The text of ``itemsmith_answers.py``: without the postponed annotations, whose dataclass
    lookup fails in a module that a loader runs without registering it (lm-eval's ``!function``)."""
    source = files("itemsmith.verification").joinpath("answer_parsing.py").read_text(encoding="utf-8")
    source = source.replace("from __future__ import annotations\n\n", "", 1)
    return source.rstrip("\n") + "\n" + _LM_EVAL_HOOK
