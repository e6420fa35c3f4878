"""A blind solver learned from the items of earlier seeds over generic option features.

The named solvers each test one cue; a template can hide a cue none of them reads (the key nearest
a round number, the only odd last digit, distractors that are multiples of the key, the key's words
in the question). This solver reads many cues at once: every option becomes a vector of features
computed from the option and question texts only (never the series), and a conditional logit
(softmax over an item's options) is fitted on the earlier seeds' items and answers the next seed's,
like every solver, so the same exact test and Holm correction apply. True/false items get a
logistic regression on the statement's words and the size of its numbers.

numpy only; a fit is a dozen Newton steps on a few hundred items (milliseconds).
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from itemsmith.items.schema import Item, ItemKind
from itemsmith.verification.audit.features import format_signature, numeric_values, plain_number, tokens

__all__ = ["MC_FEATURES", "fit_learned", "option_features", "statement_features"]

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SIGNED = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_RATIOS = (2.0, 3.0, 4.0, 5.0, 10.0, 1.5, 0.5, 1 / 3, 0.25, 0.2, 0.1, 2 / 3)
_HASHED_WORDS = 64
_NEWTON_STEPS = 12
_L2 = 0.05

MC_FEATURES = (
    "numeric", "rank", "is_min", "is_max", "centre_gap", "trailing_zeros", "roundest", "odd_last_digit",
    "unique_parity", "others_multiple_of_it", "it_multiple_of_others", "stated_in_text", "words_shared",
    "stems_shared", "length_rank", "longest", "shortest", "unique_format", "position",
)


def _digits(text: str) -> str:
    number = _NUMBER.search(text)
    return number.group(0).replace(".", "") if number else ""


def _trailing_zeros(text: str) -> float:
    digits = _digits(text).lstrip("0")
    return float(len(digits) - len(digits.rstrip("0"))) if digits else 0.0


def _stems(text: str) -> set[str]:
    return {w[:5] for w in tokens(text)}


def _context_numbers(item: Item) -> set[str]:
    text = f"{item.question} {item.context or ''}"
    return {n.rstrip("0").rstrip(".") if "." in n else n for n in _NUMBER.findall(text)}


def _dense_rank(values: Sequence[float]) -> list[float]:
    distinct = sorted(set(values))
    top = max(len(distinct) - 1, 1)
    return [distinct.index(v) / top for v in values]


def option_features(item: Item) -> np.ndarray:
    """One row of `MC_FEATURES` per option of a multiple-choice item (a read-only array)."""
    return _option_features(item.question, tuple(item.options), item.context or "")


@lru_cache(maxsize=8192)  # each fold's fit reads the items of every earlier fold again
def _option_features(question: str, options: tuple[str, ...], context_text: str) -> np.ndarray:
    item = Item(question=question, options=list(options), answer_index=0, context=context_text or None)
    n = len(options)
    rows = np.zeros((n, len(MC_FEATURES)))
    col = {name: i for i, name in enumerate(MC_FEATURES)}
    values = numeric_values(item)
    if values is not None and n >= 3:
        rows[:, col["numeric"]] = 1.0
        rows[:, col["rank"]] = _dense_rank(values)
        rows[np.argmin(values), col["is_min"]] = 1.0
        rows[np.argmax(values), col["is_max"]] = 1.0
        total = sum(values)
        gaps = [abs(v - (total - v) / (n - 1)) for v in values]
        rows[:, col["centre_gap"]] = _dense_rank(gaps)
        zeros = [_trailing_zeros(o) for o in options]
        rows[:, col["trailing_zeros"]] = [z - sum(zeros) / n for z in zeros]
        if zeros.count(max(zeros)) == 1:
            rows[int(np.argmax(zeros)), col["roundest"]] = 1.0
        parity = [int(d[-1]) % 2 if (d := _digits(o)) else 0 for o in options]
        rows[:, col["odd_last_digit"]] = parity
        for i, p in enumerate(parity):
            if parity.count(p) == 1:
                rows[i, col["unique_parity"]] = 1.0
        for i, v in enumerate(values):
            for j, w in enumerate(values):
                if i != j and v != 0 and any(math.isclose(w / v, r, rel_tol=1e-6) for r in _RATIOS):
                    rows[i, col["others_multiple_of_it"]] += 1.0 / (n - 1)
                    rows[j, col["it_multiple_of_others"]] += 1.0 / (n - 1)
    context = f"{item.question} {item.context or ''}".casefold()
    numbers = _context_numbers(item)
    asked, stems = tokens(context), _stems(context)
    for i, option in enumerate(options):
        text = " ".join(option.split()).casefold()
        number = plain_number(option)
        written = None if number is None else f"{number[0]:.{number[1]}f}".rstrip("0").rstrip(".") if number[1] \
            else f"{number[0]:.0f}"
        if (len(text) >= 3 and text in context) or (written is not None and written.lstrip("-") in numbers):
            rows[i, col["stated_in_text"]] = 1.0
        words = tokens(option)
        rows[i, col["words_shared"]] = len(words & asked) / max(1, len(words))
        rows[i, col["stems_shared"]] = len(_stems(option) & stems) / max(1, len(words))
    lengths = [len(o.strip()) for o in options]
    if len(set(lengths)) > 1:
        rows[:, col["length_rank"]] = _dense_rank(lengths)
        rows[int(np.argmax(lengths)), col["longest"]] = float(lengths.count(max(lengths)) == 1)
        rows[int(np.argmin(lengths)), col["shortest"]] = float(lengths.count(min(lengths)) == 1)
    signatures = [format_signature(o) for o in options]
    for i, s in enumerate(signatures):
        rows[i, col["unique_format"]] = float(signatures.count(s) == 1 and n >= 3)
    rows[:, col["position"]] = [i / max(n - 1, 1) for i in range(n)]
    rows.setflags(write=False)
    return rows


def statement_features(item: Item) -> np.ndarray:
    """A true/false statement: hashed content words, and how large its numbers are (signed log scale)."""
    row = np.zeros(_HASHED_WORDS + 3)
    for word in tokens(item.question):
        row[zlib.crc32(word.encode()) % _HASHED_WORDS] = 1.0
    sizes = [math.copysign(math.log10(abs(float(n)) + 1.0), float(n)) for n in _SIGNED.findall(item.question)]
    if sizes:  # a threshold that gives the truth away: claims true when small, false when large
        row[_HASHED_WORDS:] = [1.0, max(sizes), min(sizes)]
    return row


def _standardize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def _fit_choice(groups: list[np.ndarray], answers: list[int]) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]:
    """Conditional logit over the options of each item (rows of a group) with a ridge penalty, fitted
    by Newton's method; returns the scoring function and the weights (per standardized feature)."""
    stacked = np.vstack(groups)
    mean, scale = _standardize(stacked)
    z = (stacked - mean) / scale
    sizes = [len(g) for g in groups]
    starts = np.cumsum([0, *sizes[:-1]])
    target = np.zeros(len(z))
    target[starts + np.asarray(answers)] = 1.0
    w = np.zeros(z.shape[1])
    ridge = _L2 * np.eye(z.shape[1])
    for _ in range(_NEWTON_STEPS):
        scores = z @ w
        scores -= np.repeat(np.maximum.reduceat(scores, starts), sizes)
        e = np.exp(scores)
        p = e / np.repeat(np.add.reduceat(e, starts), sizes)
        grad = z.T @ (p - target) / len(groups) + _L2 * w
        expected = np.add.reduceat(z * p[:, None], starts)  # per item: E_p[z]
        hessian = ((z * p[:, None]).T @ z - expected.T @ expected) / len(groups) + ridge
        step = np.linalg.solve(hessian, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return (lambda rows: ((rows - mean) / scale) @ w), w


def _fit_binary(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], float]:
    """Logistic regression with a ridge penalty (not on the intercept), fitted by Newton's method."""
    mean, scale = _standardize(x)
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    ridge = _L2 * np.eye(z.shape[1])
    ridge[-1, -1] = 1e-9
    for _ in range(_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) / len(y) + ridge @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z / len(y) + ridge
        step = np.linalg.solve(hessian, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return lambda row: float(np.append((row - mean) / scale, 1.0) @ w)


def fit_learned(train: Sequence[Item]) -> tuple[Callable[[Item], int | None], str]:
    """Fit on `train`; the predictor answers every item of a kind it has seen (argmax score)."""
    mc = [i for i in train if i.kind is not ItemKind.tf]
    tf = [i for i in train if i.kind is ItemKind.tf]
    choose, weights = _fit_choice([option_features(i) for i in mc], [i.answer_index for i in mc]) \
        if len(mc) >= 10 else (None, np.zeros(len(MC_FEATURES)))
    truth = None
    if len(tf) >= 10 and len({i.answer_index for i in tf}) == 2:
        truth = _fit_binary(np.vstack([statement_features(i) for i in tf]),
                            np.array([1.0 if i.answer_index == 0 else 0.0 for i in tf]))

    def predict(item: Item) -> int | None:
        if item.kind is ItemKind.tf:
            return None if truth is None else (0 if truth(statement_features(item)) > 0 else 1)
        if choose is None:
            return None
        scores = choose(option_features(item))
        return int(np.argmax(scores)) if np.ptp(scores) > 1e-9 else None

    top = [f"{MC_FEATURES[i].replace('_', ' ')} ({'+' if weights[i] > 0 else '-'})"
           for i in np.argsort(-np.abs(weights))[:3] if abs(weights[i]) > 0.05]
    note = (f"a conditional logit over {len(MC_FEATURES)} option features fitted on {len(mc)} items, leaning on "
            f"{', '.join(top) or 'nothing'}") if choose is not None else ""
    if truth is not None:
        note += ("; " if note else "") + f"a logistic regression on the wording of {len(tf)} statements"
    return predict, note or "too few training items"
