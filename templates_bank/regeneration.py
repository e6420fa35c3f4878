"""Regenerate a release's items from template sources and seeds, in the sandbox, in order.

One sandbox pool per handler, each loading its handler once (one snapshot): for one handler
and one worker the shared single-worker pool (warm across calls in a long-lived process), else
a pool of ``workers`` per handler of this regeneration alone (no more than the handler has
runs). Those pools start at once and run side by side (starting a pool, which loads the
handler's data, costs more than most runs), so a bank over several handlers takes about as
long as its slowest handler, not their sum. Results come back in (template, seed) order whatever the
concurrency, and a bounded window of runs is held in memory, so a bank of any size streams.

A static run (an imported group of stored items, `items.static`) needs no sandbox: its items are
read from its source, whatever the seed and size. The sandbox is imported when templates run:
reading a release's stored items (exports, evaluation) never loads it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, deque
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from itemsmith.items.hashing import canonical_json
from itemsmith.items.schema import Item, TemplateKind
from itemsmith.items.static import StaticSourceError, parse_static_source

if TYPE_CHECKING:
    from itemsmith.sandbox import RunResult, SandboxLimits, SandboxPool

__all__ = ["RegenerationError", "RunItems", "TemplateRun", "bodies_digest", "items_digest", "regenerate"]


class RegenerationError(RuntimeError):
    """A template run failed while regenerating a release."""


@dataclass(frozen=True)
class TemplateRun:
    """What to regenerate for one template version: every seed, ``num_samples`` items each."""

    template_id: str
    source: str
    handler: str
    seeds: tuple[int, ...]
    num_samples: int
    kind: TemplateKind = "code"


@dataclass(frozen=True)
class RunItems:
    """The items of one (template, seed) run; with ``keep_going``, a failed run has none and says
    why in ``error``."""

    run: TemplateRun
    seed: int
    items: list[Item]
    error: str | None = None


def items_digest(digest: hashlib._Hash, items: Sequence[Item]) -> None:
    """Feed items to a sha256 as canonical JSON lines (what a release's ``items_sha256`` hashes)."""
    for item in items:
        digest.update(canonical_json(item.model_dump(mode="json")).encode("utf-8"))
        digest.update(b"\n")


def bodies_digest(digest: hashlib._Hash, bodies: Sequence[str]) -> None:
    """`items_digest` of items given as their stored JSON text (the same canonical lines)."""
    for body in bodies:
        digest.update(canonical_json(json.loads(body)).encode("utf-8"))
        digest.update(b"\n")


def _failed(run: TemplateRun, seed: int, error: str, keep_going: bool) -> RunItems:
    if not keep_going:
        raise RegenerationError(f"template {run.template_id!r} seed {seed}: {error}")
    return RunItems(run=run, seed=seed, items=[], error=error)


def _items(run: TemplateRun, seed: int, result: RunResult, keep_going: bool) -> RunItems:
    if not result.ok:
        return _failed(run, seed, f"{result.status.value}: {result.error}", keep_going)
    return RunItems(run=run, seed=seed, items=[Item.model_validate(raw) for raw in result.items])


def _static_items(run: TemplateRun, seed: int, keep_going: bool) -> RunItems:
    try:
        return RunItems(run=run, seed=seed, items=parse_static_source(run.source))
    except StaticSourceError as exc:
        return _failed(run, seed, str(exc), keep_going)


def regenerate(runs: Sequence[TemplateRun], *, workers: int = 1, limits: SandboxLimits | None = None,
               keep_going: bool = False) -> Generator[RunItems, None, None]:
    """Yield each (template, seed) run's items in order; raise `RegenerationError` on a failed run
    (with ``keep_going``, yield it with its ``error`` and go on)."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if any(run.kind == "static" for run in runs):
        yield from _mixed(runs, workers=workers, limits=limits, keep_going=keep_going)
        return
    jobs = [(run, seed) for run in runs for seed in run.seeds]
    if not jobs:
        return
    from itemsmith.sandbox import SandboxPool, get_pool

    # a handler gets no more workers than it has runs: each worker is a process loading its data
    handlers = Counter(run.handler for run, _ in jobs)
    in_flight = sum(min(workers, count) for count in handlers.values())
    window = max(4 * in_flight, 16)
    with ExitStack() as stack:
        # pool starts, then runs: every handler's pool starts on a thread of its own at once
        executor = stack.enter_context(ThreadPoolExecutor(max_workers=len(handlers) + in_flight))

        shared = workers == 1 and len(handlers) == 1

        def start(handler: str) -> SandboxPool:
            if shared:
                return get_pool(handler, limits)
            return SandboxPool(handler, workers=min(workers, handlers[handler]), limits=limits)

        pools = {handler: executor.submit(start, handler) for handler in handlers}
        if not shared:
            stack.callback(_close_started, pools)
        # on an early exit (a failed run, the caller stops reading): drop the runs not started
        stack.callback(executor.shutdown, wait=True, cancel_futures=True)

        def run_one(run: TemplateRun, seed: int) -> RunResult:
            return pools[run.handler].result().run(run.source, num_samples=run.num_samples, seed=seed)

        pending: deque[tuple[TemplateRun, int, Future[RunResult]]] = deque()
        for run, seed in jobs:
            pending.append((run, seed, executor.submit(run_one, run, seed)))
            if len(pending) >= window:
                done_run, done_seed, future = pending.popleft()
                yield _items(done_run, done_seed, future.result(), keep_going)
        while pending:
            done_run, done_seed, future = pending.popleft()
            yield _items(done_run, done_seed, future.result(), keep_going)


def _mixed(runs: Sequence[TemplateRun], *, workers: int, limits: SandboxLimits | None,
           keep_going: bool) -> Iterator[RunItems]:
    """Static runs read in place, each stretch of code runs between them regenerated as usual."""
    stretch: list[TemplateRun] = []
    for run in runs:
        if run.kind != "static":
            stretch.append(run)
            continue
        if stretch:
            yield from regenerate(stretch, workers=workers, limits=limits, keep_going=keep_going)
            stretch = []
        for seed in run.seeds:
            yield _static_items(run, seed, keep_going)
    if stretch:
        yield from regenerate(stretch, workers=workers, limits=limits, keep_going=keep_going)


def _close_started(pools: dict[str, Future[SandboxPool]]) -> None:
    """Close the pools of this regeneration (not the shared ones) that started."""
    for future in pools.values():
        if future.done() and future.exception() is None:
            future.result().close()
