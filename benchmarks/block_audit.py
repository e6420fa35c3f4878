"""Benchmark: the item audit's verdict on block templates of the quick start's handler (weather).

Each row is a template made of blocks, drawn in-process as the audit draws one (8 seeds of 30
items, fixed seeds) and audited with `audit_items`: whether it passes, the blind solvers that beat
chance, the best solver's accuracy against chance, and the draws it took (each `None` from a block
or `ask` is a draw the template makes again). Rows: counts of a week and of a random window at a
fixed threshold (16 degC of temp_max, a seasonal channel) and at one drawn per item
(`draw_threshold`), rainy days (precipitation above 0), and two statistics.

    python benchmarks/block_audit.py

Run it at two commits to read a change to `ask` or the blocks against the one before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from itemsmith.handlers.registry import get_builtin
from itemsmith.items import blocks
from itemsmith.items.schema import Item
from itemsmith.verification.audit import AuditReport, ItemDraw, audit_items

HANDLER = get_builtin("weather")
IDS = HANDLER.records()["record_id"].tolist()
MAX_DRAWS = 20_000

Result = Callable[[blocks.Window, np.random.Generator], Any]
ROWS: dict[str, tuple[str, int | None, Result]] = {
    "count above 16 degC, a week": ("temp_max", 7, lambda w, rng: blocks.count_beyond(w, above=16.0)),
    "count above 16 degC, a random window": ("temp_max", None, lambda w, rng: blocks.count_beyond(w, above=16.0)),
    "count above a drawn threshold, a week": (
        "temp_max", 7, lambda w, rng: blocks.count_beyond(w, above=blocks.draw_threshold(w, rng=rng))),
    "count above a drawn threshold, a random window": (
        "temp_max", None, lambda w, rng: blocks.count_beyond(w, above=blocks.draw_threshold(w, rng=rng))),
    "rainy days (precipitation above 0), a week": ("precipitation", 7, lambda w, rng: blocks.count_beyond(w, above=0)),
    "rainy days, a random window": ("precipitation", None, lambda w, rng: blocks.count_beyond(w, above=0)),
    "max of temp_max, a week": ("temp_max", 7, lambda w, rng: blocks.channel_stat(w, "max")),
    "mean of temp_max, a random window": ("temp_max", None, lambda w, rng: blocks.channel_stat(w, "mean")),
}


def audited(channel: str, length: int | None, result: Result) -> tuple[AuditReport, int]:
    draws, tried = [], 0
    for seed in range(8):
        rng = np.random.default_rng([0, seed])
        items: list[Item] = []
        while len(items) < 30 and tried < MAX_DRAWS:
            tried += 1
            window = blocks.take_window(HANDLER, IDS[int(rng.integers(len(IDS)))], channel, rng=rng, length=length)
            raw = None if window is None else blocks.ask(result(window, rng), rng=rng)
            if raw is not None:
                items.append(Item.model_validate(raw))
        draws.append(ItemDraw(seed=seed, num_samples=30, items=items))
    return audit_items(draws), tried


def main() -> None:
    print("| template | audit | shortcuts | best solver: accuracy / chance (items it answered) | draws for 240 items |")
    print("|---|---|---|---|---|")
    for name, (channel, length, result) in ROWS.items():
        report, tried = audited(channel, length, result)
        shortcuts = [f"{s.solver} {s.correct}/{s.applicable}" for s in report.solvers if s.shortcut]
        failed = [f.check for f in report.findings if not f.passed]
        best = max((s for s in report.solvers if s.tested), key=lambda s: s.gain or -1.0, default=None)
        shown = f"{best.solver} {best.accuracy:.2f} / {best.chance:.2f} ({best.applicable})" if best else "none tested"
        print(f"| {name} | {'passed' if report.passed else 'rejected'} | {', '.join(shortcuts + failed) or '-'} "
              f"| {shown} | {tried} |", flush=True)


if __name__ == "__main__":
    main()
