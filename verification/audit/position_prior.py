"""Position priors over a group's other items (leave one out), tested against a simulated null.

For a fixed item set the strongest position cue is the group itself: a benchmark whose keys sit
mostly at one position (`position`: answer the position keyed most often in the group's other
items), or whose keys were balanced by hand so that each position is keyed equally often
(`least_keyed`: answer the position keyed least often in the others). Each item is answered from
all the other items of its group with the same number of options; ties are broken as the blind
solvers break them (`features.tie_break`: by the item's text, never its key).

Leave-one-out answers share their training items, so the count right is not binomial. Its null
distribution (every key uniform over its item's positions, independently) is simulated with
the same rule, `SIMULATIONS` times from a seed fixed per group: the p-value is exact up to the
simulation, ``(1 + simulated counts >= observed) / (1 + SIMULATIONS)``, and pooled scopes (a
category, the whole set) add the groups' simulated counts draw by draw.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from itemsmith.items.schema import Item

__all__ = ["POSITION_PRIORS", "SIMULATIONS", "PositionPrior", "PriorOutcome", "answer_prior"]

SIMULATIONS = 4000
_CELLS = 4_000_000  # draws x items x options simulated at once


@dataclass(frozen=True)
class PositionPrior:
    name: str
    pick: Literal["most", "least"]
    note: str
    shortcut: str
    fix: str


POSITION_PRIORS: tuple[PositionPrior, ...] = (
    PositionPrior("position", "most", "answers the position keyed most often in the group's other items",
                  "the key's position among the options is predictable from the group's other items",
                  "shuffle each item's options (draw the key's position uniformly, independently per item)"),
    PositionPrior("least_keyed", "least", "answers the position keyed least often in the group's other items",
                  "the keys are balanced over positions within the group, so the position keyed least often in its "
                  "other items is the likely key",
                  "draw each item's key position at random (independently), not from a balanced schedule"),
)


@dataclass
class PriorOutcome:
    """Observed right answers, the simulated null counts, and what chance expects."""

    applicable: int
    correct: int
    expected: float
    null: np.ndarray  # (SIMULATIONS,) right answers under the null

    @classmethod
    def empty(cls) -> PriorOutcome:
        return cls(0, 0, 0.0, np.zeros(SIMULATIONS, dtype=np.int64))

    def __add__(self, other: PriorOutcome) -> PriorOutcome:
        return PriorOutcome(self.applicable + other.applicable, self.correct + other.correct,
                            self.expected + other.expected, self.null + other.null)

    @property
    def p_value(self) -> float:
        return float((1 + np.count_nonzero(self.null >= self.correct)) / (1 + len(self.null)))

    def detectable(self, alpha: float) -> int | None:
        """The fewest right answers whose simulated p-value is below `alpha` (None: none is)."""
        ordered = np.sort(self.null)
        for k in range(self.applicable + 1):
            at_least = len(ordered) - int(np.searchsorted(ordered, k, side="left"))
            if (1 + at_least) / (1 + len(ordered)) < alpha:
                return k
        return None

    def power(self, alpha: float, effect: float) -> float:
        """Normal approximation: the chance of reaching `detectable` when each answer is right
        `effect` more often than chance (the null's spread kept)."""
        needed = self.detectable(alpha)
        if needed is None or not self.applicable:
            return 0.0
        mean = min(float(self.applicable), self.expected + effect * self.applicable)
        spread = max(float(self.null.std()), 0.5)
        return 0.5 * math.erfc((needed - 0.5 - mean) / (spread * math.sqrt(2)))


def _tie_hash(item: Item) -> int:
    digest = hashlib.sha1((item.question + "\x00" + "\x00".join(sorted(item.options))).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _right(keys: np.ndarray, order: np.ndarray, ties: np.ndarray, k: int, pick: str) -> np.ndarray:
    """Right answers per row of `keys` (draws x items): each item answered from the others' keys."""
    onehot = np.eye(k, dtype=np.int32)[keys]  # (draws, items, k)
    others = onehot.sum(axis=1, keepdims=True) - onehot
    target = others.min(axis=-1, keepdims=True) if pick == "least" else others.max(axis=-1, keepdims=True)
    tied = np.take_along_axis(others == target, np.broadcast_to(order, others.shape), axis=-1)  # text order
    index = ties % tied.sum(axis=-1)  # tie_break: the (hash mod count)-th candidate in text order
    slot = np.argmax(tied & (np.cumsum(tied, axis=-1) == (index + 1)[..., None]), axis=-1)
    chosen = np.take_along_axis(np.broadcast_to(order, others.shape), slot[..., None], axis=-1)[..., 0]
    return (chosen == keys).sum(axis=1)


def answer_prior(prior: PositionPrior, items: Sequence[Item], seed: str) -> PriorOutcome:
    """The prior's right answers on `items` (one group) and their null, simulated from `seed`."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(f"{prior.name}\0{seed}".encode()).digest()[:8], "big"))
    by_count: dict[int, list[Item]] = defaultdict(list)
    for item in items:
        by_count[len(item.options)].append(item)
    outcome = PriorOutcome.empty()
    for k, members in sorted(by_count.items()):
        if len(members) < 2:
            continue
        order = np.array([sorted(range(k), key=item.options.__getitem__) for item in members])
        ties = np.array([_tie_hash(item) for item in members], dtype=np.int64)
        keys = np.array([item.answer_index for item in members])
        correct = int(_right(keys[None], order, ties, k, prior.pick)[0])
        batch = max(1, min(SIMULATIONS, _CELLS // (len(members) * k)))
        null = np.concatenate([_right(rng.integers(0, k, (min(batch, SIMULATIONS - done), len(members))), order, ties,
                                      k, prior.pick) for done in range(0, SIMULATIONS, batch)])
        outcome = outcome + PriorOutcome(len(members), correct, len(members) / k, null)
    return outcome
