"""Item-building helpers injected into every template.

Templates call them without `rng`: the runner binds each to the run's seeded
generator (`bind_helpers`), so the correct option's position is uniform and the
same seed gives the same items.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from itemsmith.templates_bank.items.schema import MAX_OPTIONS


def series(values: Sequence[float], name: str = "series", timestamps: Sequence[Any] | None = None,
           unit: str | None = None) -> dict[str, Any]:
    """One named channel for an item's `series` list (values become plain floats)."""
    channel: dict[str, Any] = {"name": str(name), "values": [float(v) for v in values]}
    if timestamps is not None:
        channel["timestamps"] = [str(t) for t in timestamps]
    if unit is not None:
        channel["unit"] = str(unit)
    return channel


def _item(kind: str, question: str, options: list[str], answer_index: int, series_list: Any,
          context: str | None, rationale: str | None, metadata: dict[str, Any] | None) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": kind, "question": question, "options": options,
                            "answer_index": int(answer_index), "series": list(series_list or [])}
    if context is not None:
        item["context"] = context
    if rationale is not None:
        item["rationale"] = rationale
    if metadata:
        item["metadata"] = dict(metadata)
    return item


def mc_item(question: str, correct: Any, distractors: Sequence[Any], *, rng: np.random.Generator,
            series: Any = None, context: str | None = None, rationale: str | None = None,
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A multiple-choice item: the correct option plus 1 to 5 distractors, shuffled by `rng`."""
    options = [str(correct)] + [str(d) for d in distractors]
    if not 2 <= len(options) <= MAX_OPTIONS:
        raise ValueError(f"mc_item needs 1 to {MAX_OPTIONS - 1} distractors, got {len(options) - 1}")
    if len(set(options)) != len(options):
        raise ValueError(f"mc_item options must be distinct, got {options}")
    order = rng.permutation(len(options))
    shuffled = [options[i] for i in order]
    return _item("mc", question, shuffled, int(np.flatnonzero(order == 0)[0]), series, context,
                 rationale, metadata)


def tf_item(statement: str, is_true: bool, *, rng: np.random.Generator | None = None,
            series: Any = None, context: str | None = None, rationale: str | None = None,
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A true/false item; options are always ("True", "False")."""
    del rng  # accepted so every helper binds the same way
    return _item("tf", statement, ["True", "False"], 0 if bool(is_true) else 1, series, context,
                 rationale, metadata)


def pz_item(question: str, first: Sequence[float], segments: Sequence[Sequence[float]], *,
            rng: np.random.Generator, n_options: int = 4, context: str | None = None,
            rationale: str | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A puzzle item (TSAQA): `first` is shown, `segments` (in their true order) are shuffled
    and labelled S1..Sk; the options are orderings of those labels."""
    k = len(segments)
    if k < 2:
        raise ValueError("pz_item needs at least 2 segments to order")
    n_options = min(n_options, MAX_OPTIONS, math.factorial(k))
    if n_options < 2:
        raise ValueError("pz_item needs n_options >= 2")
    shown = rng.permutation(k)  # shown[j] = true position of the segment labelled S{j+1}
    label_of = {int(true_pos): f"S{j + 1}" for j, true_pos in enumerate(shown)}
    correct = tuple(label_of[p] for p in range(k))
    wrong: list[tuple[str, ...]] = []
    labels = [f"S{j + 1}" for j in range(k)]
    candidates = list(itertools.permutations(labels)) if k <= 6 else None
    while len(wrong) < n_options - 1:
        if candidates is not None:
            perm = candidates[int(rng.integers(len(candidates)))]
        else:
            perm = tuple(labels[i] for i in rng.permutation(k))
        if perm != correct and perm not in wrong:
            wrong.append(perm)
    channels = [series(first, name="given")]
    channels += [series(segments[int(true_pos)], name=f"S{j + 1}") for j, true_pos in enumerate(shown)]
    item = mc_item(question, " -> ".join(correct), [" -> ".join(w) for w in wrong], rng=rng,
                   series=channels, context=context, rationale=rationale, metadata=metadata)
    item["kind"] = "pz"
    return item


HELPERS: dict[str, Callable[..., dict[str, Any]]] = {
    "mc_item": mc_item,
    "tf_item": tf_item,
    "pz_item": pz_item,
}


def bind_helpers(rng: np.random.Generator) -> dict[str, Callable[..., Any]]:
    """The helper names a template sees, each bound to the run's generator."""
    bound: dict[str, Callable[..., Any]] = {name: functools.partial(fn, rng=rng) for name, fn in HELPERS.items()}
    bound["series"] = series
    return bound
