"""The item pool: how many different items a template makes, read off the audit's draws.

A template over 12 years of airline passengers, 48 months of Seattle weather or 80 recordings makes
a small pool: items and keys recur across seeds because the data is small, not because the items
can be answered without it. So the pool is a property the report states (distinct items, records,
repeats within a draw, questions that come back with their key, an estimate of the pool's size),
never a rejection; fresh-instance evaluation reads it to warn before it would repeat items. Items
that show no series at all are a defect, not a property (`item_checks`).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

from itemsmith.items.schema import Item, ItemPool
from itemsmith.verification.audit.fidelity import named_record_ids
from itemsmith.verification.audit.item_checks import Drawn
from itemsmith.verification.settings import AuditConfig

__all__ = ["item_pool"]


def _largest_draws(drawn: Drawn) -> dict[int, list[tuple[str, Item]]]:
    """(content key, item) of each seed's largest draw, seeds in the order drawn (a seed's smaller
    draws repeat its first items)."""
    largest: dict[int, list[tuple[str, Item]]] = {}
    for draw, keys in zip(drawn.draws, drawn.keys, strict=True):
        if len(keys) > len(largest.get(draw.seed, [])):
            largest[draw.seed] = list(zip(keys, draw.items, strict=True))
    return largest


def _chao1(counts: Counter[str]) -> int | None:
    """Bias-corrected Chao1 estimate of the number of different items, from how often each was drawn;
    None when no item was drawn twice (the pool is large beside the draws)."""
    if not counts or max(counts.values()) < 2:
        return None
    seen_once = sum(1 for n in counts.values() if n == 1)
    seen_twice = sum(1 for n in counts.values() if n == 2)
    return len(counts) + round(seen_once * (seen_once - 1) / (2 * (seen_twice + 1)))


def _asked(question: str) -> str:
    return " ".join(re.sub(r"\s+", " ", question).split()).casefold()


def item_pool(drawn: Drawn, config: AuditConfig) -> ItemPool:
    """The pool of the drawn items (see the module docstring)."""
    items = drawn.items
    draws = list(_largest_draws(drawn).values())
    n = sum(len(draw) for draw in draws)
    repeats = sum(len(draw) - len({key for key, _ in draw}) for draw in draws)
    keyed: dict[str, set[str]] = defaultdict(set)  # question -> its keys in earlier seeds
    recurring = 0
    for draw in draws:
        recurring += sum(item.answer in keyed[_asked(item.question)] for _, item in draw)
        for _, item in draw:
            keyed[_asked(item.question)].add(item.answer)
    records = {rid for item in items for rid in named_record_ids(item)}
    pool = ItemPool(items=len(items), distinct=len(set(drawn.all_keys)),
                    distinct_series=len({json.dumps([s.values for s in i.series]) for i in items}),
                    records=len(records) if records else None,
                    repeats_in_draw=repeats / n if n else 0.0, recurring_keys=recurring / n if n else 0.0,
                    estimated_size=_chao1(Counter(key for draw in draws for key, _ in draw)))
    return pool.model_copy(update={"small": pool.repeats_expected(config.pool_evaluation_items)
                                   > config.pool_max_repeats})
