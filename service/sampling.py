"""Sample items for the review pages and ``GET /templates/{id}``, run in the sandbox with the
sandbox work bounded per owner.

- **Cached per version, handler, count and seed**: a version's source is immutable and a seed
  gives the same items, so a page and its plots share one run, and requests that arrive while the
  run is in flight wait for it instead of starting their own.
- **Fair**: at most `ServiceSettings.sample_workers` runs at once (the API's own pool per
  handler, shared by the process's apps, never the jobs'), at most ``sample_runs_per_owner`` of
  them one owner's; a freed slot goes to the waiting owner with the fewest runs in flight (first come, first served among
  equals), so one owner's slow template never queues another owner's page behind it.
- **Bounded**: an owner with ``sample_queue_per_owner`` requests waiting already, or a wait over
  ``sample_wait_s``, gets `SamplerBusy` (the API answers 503 with Retry-After).

Callers hold no database session while they wait or run (the API releases it first).
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import RunResult, SandboxError, SandboxPool
from itemsmith.service.settings import ServiceSettings

__all__ = ["FairGate", "SamplerBusy", "TemplateSampler"]


class SamplerBusy(Exception):
    """Too much sandbox work is queued for this owner; try again after `retry_after_s`."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class _Waiter:
    owner: str
    order: int


@dataclass
class FairGate:
    """Slots for ``total`` runs at once, ``per_owner`` of them per owner, handed out fairly."""

    total: int
    per_owner: int
    queue_per_owner: int
    wait_s: float
    _running: dict[str, int] = field(default_factory=dict)
    _waiting: list[_Waiter] = field(default_factory=list)
    _condition: threading.Condition = field(default_factory=threading.Condition)
    _orders: itertools.count = field(default_factory=itertools.count)

    def _next(self) -> _Waiter | None:
        """The waiter that may run now: of those whose owner is under its share, the owner with the
        fewest runs in flight, then the earliest."""
        if sum(self._running.values()) >= self.total:
            return None
        eligible = [w for w in self._waiting if self._running.get(w.owner, 0) < self.per_owner]
        return min(eligible, key=lambda w: (self._running.get(w.owner, 0), w.order), default=None)

    def acquire(self, owner: str) -> None:
        with self._condition:
            if sum(1 for w in self._waiting if w.owner == owner) >= self.queue_per_owner:
                raise SamplerBusy(f"{self.queue_per_owner} sample requests of yours are waiting already",
                                  retry_after_s=max(1, round(self.wait_s / 4)))
            waiter = _Waiter(owner, next(self._orders))
            self._waiting.append(waiter)
            deadline = time.monotonic() + self.wait_s
            try:
                while self._next() is not waiter:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise SamplerBusy(f"no sandbox slot freed within {self.wait_s:g} s",
                                          retry_after_s=max(1, round(self.wait_s / 4)))
                    self._condition.wait(left)
            finally:
                self._waiting.remove(waiter)
                self._condition.notify_all()  # the next waiter may be eligible now
            self._running[owner] = self._running.get(owner, 0) + 1

    def release(self, owner: str) -> None:
        with self._condition:
            self._running[owner] -= 1
            if not self._running[owner]:
                del self._running[owner]
            self._condition.notify_all()

    def in_flight(self) -> dict[str, int]:
        with self._condition:
            return dict(self._running)


_Key = tuple[str, str, int, int]  # content hash, handler, count, seed
_WARM_UP = "def question(num_samples):\n    return []\n"


class TemplateSampler:
    """Cached, fair sample runs (see the module); thread-safe, one per app."""

    def __init__(self, settings: ServiceSettings, *, cache_size: int = 256, max_pools: int = 8) -> None:
        self.gate = FairGate(total=settings.sample_workers, per_owner=settings.sample_runs_per_owner,
                             queue_per_owner=settings.sample_queue_per_owner, wait_s=settings.sample_wait_s)
        self._workers = settings.sample_workers
        self._cache: OrderedDict[_Key, Future[RunResult]] = OrderedDict()
        self._cache_size = cache_size
        self._max_pools = max_pools
        self._lock = threading.Lock()
        self.runs = 0  # sandbox runs made (the cache's misses)

    def sample(self, owner: str, *, source: str, content_hash: str, handler: str, num_samples: int,
               seed: int) -> RunResult:
        """The run's result; a failure is a result, never an exception (except `SamplerBusy`)."""
        key = (content_hash, handler, num_samples, seed)
        with self._lock:
            future = self._cache.get(key)
            mine = future is None
            if future is None:
                future = self._cache[key] = Future()
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(key)
        if not mine:
            return future.result()
        try:
            result = self._gated(owner, lambda: self._run(source, handler, num_samples, seed))
        except SandboxError as exc:  # the pool did not start (it may next time): a result, not cached
            self._forget(key, future)
            result = RunResult(status=RunStatus.error, error=str(exc))
            future.set_result(result)
            return result
        except BaseException as exc:  # a busy gate: not cached either
            self._forget(key, future)
            future.set_exception(exc)
            raise
        future.set_result(result)
        return result

    def _forget(self, key: _Key, future: Future[RunResult]) -> None:
        with self._lock:
            if self._cache.get(key) is future:
                del self._cache[key]

    def _gated(self, owner: str, run: Callable[[], RunResult]) -> RunResult:
        self.gate.acquire(owner)
        try:
            return run()
        finally:
            self.gate.release(owner)

    def _pool(self, handler: str) -> SandboxPool:
        """The process's sample pool of `handler` (shared by every app of the process, so a pool
        stays warm; the least recently used beyond `max_pools` handlers are closed)."""
        key = (handler, self._workers)
        with _POOLS_LOCK:
            pool = _POOLS.get(key)
            if pool is not None:
                _POOLS.move_to_end(key)
                return pool
        pool = SandboxPool(handler, workers=self._workers)  # starts one worker now, the rest on demand
        with _POOLS_LOCK:
            if key in _POOLS:  # another thread made one meanwhile
                spare, pool = pool, _POOLS[key]
                spare.close()
                return pool
            _POOLS[key] = pool
            stale = [_POOLS.popitem(last=False)[1] for _ in range(len(_POOLS) - self._max_pools)]
        for old in stale:
            old.close()
        return pool

    def _warm(self, pool: SandboxPool) -> None:
        """After a pool's first run: start its other workers in the background (a worker loads its
        handler for seconds), so one owner's slow runs never leave another owner's page a cold
        start; after the first run, so that the first page does not wait for them."""
        with _POOLS_LOCK:
            if pool in _WARMED:
                return
            _WARMED.add(pool)

        def run() -> None:
            try:
                pool.run(_WARM_UP, num_samples=1, seed=0)
            except SandboxError:
                pass  # the pool closed, or a worker did not start: requests start it on demand

        for _ in range(self._workers - 1):
            threading.Thread(target=run, name="itemsmith-sample-warm-up", daemon=True).start()

    def _run(self, source: str, handler: str, num_samples: int, seed: int) -> RunResult:
        with self._lock:
            self.runs += 1
        pool = self._pool(handler)
        result = pool.run(source, num_samples=num_samples, seed=seed)
        self._warm(pool)
        return result

def _close_pools() -> None:
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


_POOLS: OrderedDict[tuple[str, int], SandboxPool] = OrderedDict()
_POOLS_LOCK = threading.Lock()
_WARMED: weakref.WeakSet[SandboxPool] = weakref.WeakSet()
atexit.register(_close_pools)
