"""Regenerate a release's items from template sources and seeds, in the sandbox, in order.

One sandbox pool per handler (the shared single-worker pool, or a pool of ``workers`` with
that many runs in flight). Results come back in (template, seed) order whatever the
concurrency, and at most ``2 * workers`` runs are held in memory, so a bank of any size streams.

A static run (an imported group of stored items, `items.static`) needs no sandbox: its items are
read from its source, whatever the seed and size.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

from itemsmith.items.hashing import canonical_json
from itemsmith.items.schema import Item, TemplateKind
from itemsmith.items.static import StaticSourceError, parse_static_source
from itemsmith.sandbox import RunResult, SandboxLimits, SandboxPool, get_pool

__all__ = ["RegenerationError", "RunItems", "TemplateRun", "items_digest", "regenerate"]


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
    """The items of one (template, seed) run."""

    run: TemplateRun
    seed: int
    items: list[Item]


def items_digest(digest: hashlib._Hash, items: Sequence[Item]) -> None:
    """Feed items to a sha256 as canonical JSON lines (what a release's ``items_sha256`` hashes)."""
    for item in items:
        digest.update(canonical_json(item.model_dump(mode="json")).encode("utf-8"))
        digest.update(b"\n")


def _items(run: TemplateRun, seed: int, result: RunResult) -> RunItems:
    if not result.ok:
        raise RegenerationError(f"template {run.template_id!r} seed {seed}: {result.status.value}: {result.error}")
    return RunItems(run=run, seed=seed, items=[Item.model_validate(raw) for raw in result.items])


def _static_items(run: TemplateRun, seed: int) -> RunItems:
    try:
        return RunItems(run=run, seed=seed, items=parse_static_source(run.source))
    except StaticSourceError as exc:
        raise RegenerationError(f"template {run.template_id!r}: {exc}") from None


def regenerate(runs: Sequence[TemplateRun], *, workers: int = 1,
               limits: SandboxLimits | None = None) -> Iterator[RunItems]:
    """Yield each (template, seed) run's items in order; raise `RegenerationError` on a failed run."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if any(run.kind == "static" for run in runs):
        yield from _mixed(runs, workers=workers, limits=limits)
        return
    jobs = [(run, seed) for run in runs for seed in run.seeds]
    with ExitStack() as stack:
        pools: dict[str, SandboxPool] = {}

        def pool(handler: str) -> SandboxPool:
            if handler not in pools:
                pools[handler] = (get_pool(handler, limits) if workers == 1 else
                                  stack.enter_context(SandboxPool(handler, workers=workers, limits=limits)))
            return pools[handler]

        if workers == 1:
            for run, seed in jobs:
                yield _items(run, seed, pool(run.handler).run(run.source, num_samples=run.num_samples, seed=seed))
            return
        executor = stack.enter_context(ThreadPoolExecutor(max_workers=workers))
        pending: deque[tuple[TemplateRun, int, Future[RunResult]]] = deque()
        for run, seed in jobs:
            pending.append((run, seed, executor.submit(pool(run.handler).run, run.source,
                                                       num_samples=run.num_samples, seed=seed)))
            if len(pending) >= 2 * workers:
                done_run, done_seed, future = pending.popleft()
                yield _items(done_run, done_seed, future.result())
        while pending:
            done_run, done_seed, future = pending.popleft()
            yield _items(done_run, done_seed, future.result())


def _mixed(runs: Sequence[TemplateRun], *, workers: int, limits: SandboxLimits | None) -> Iterator[RunItems]:
    """Static runs read in place, each stretch of code runs between them regenerated as usual."""
    stretch: list[TemplateRun] = []
    for run in runs:
        if run.kind != "static":
            stretch.append(run)
            continue
        if stretch:
            yield from regenerate(stretch, workers=workers, limits=limits)
            stretch = []
        for seed in run.seeds:
            yield _static_items(run, seed)
    if stretch:
        yield from regenerate(stretch, workers=workers, limits=limits)
