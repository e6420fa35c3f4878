"""Regeneration starts the pool of every handler at once and runs them side by side,
one pool (one handler snapshot) per handler, and still yields runs in (template, seed) order with
the same items as one run at a time.

The concurrency checks use stand-in pools (a pool's start waits at a barrier for every other
handler's: pools started one after another would never meet there); the order check runs real
templates in the sandbox."""

from __future__ import annotations

import threading

import pytest

from itemsmith import sandbox
from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import RunResult, run_template
from itemsmith.templates_bank.curated import load_curated
from itemsmith.templates_bank.regeneration import RegenerationError, TemplateRun, regenerate


class _BarrierPools:
    """SandboxPool stand-ins: each start waits for every handler's; runs echo their seed."""

    def __init__(self, handlers: int) -> None:
        self.barrier = threading.Barrier(handlers, timeout=20)
        self.started: list[str] = []
        self.closed: list[str] = []
        self.workers: dict[str, int] = {}
        outer = self

        class Pool:
            def __init__(self, handler: str, *, workers: int = 1, limits: object = None) -> None:
                outer.barrier.wait()  # BrokenBarrierError when the starts are not concurrent
                outer.started.append(handler)
                outer.workers[handler] = workers
                self.handler = handler

            def run(self, source: str, *, num_samples: int, seed: int) -> RunResult:
                if "broken" in source:
                    return RunResult(status=RunStatus.error, error="boom")
                return RunResult(status=RunStatus.ok, items=[])

            def close(self) -> None:
                outer.closed.append(self.handler)

        self.Pool = Pool


def _runs(handlers: list[str], source: str = "def question(n): return []") -> list[TemplateRun]:
    return [TemplateRun(template_id=f"t{i}", source=source, handler=h, seeds=(0, 1), num_samples=1)
            for i, h in enumerate(handlers)]


def test_the_pools_of_every_handler_start_at_once_and_are_closed_after(monkeypatch: pytest.MonkeyPatch) -> None:
    pools = _BarrierPools(3)
    monkeypatch.setattr(sandbox, "SandboxPool", pools.Pool)  # regeneration imports it when it runs
    out = list(regenerate(_runs(["a", "b", "c", "a"])))
    assert [(r.run.template_id, r.seed) for r in out] == [(f"t{i}", s) for i in range(4) for s in (0, 1)]
    assert sorted(pools.started) == ["a", "b", "c"]  # one pool per handler, however many templates
    assert sorted(pools.closed) == ["a", "b", "c"]


def test_a_handler_gets_no_more_workers_than_it_has_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    pools = _BarrierPools(2)
    monkeypatch.setattr(sandbox, "SandboxPool", pools.Pool)
    runs = [*_runs(["a", "a"]), TemplateRun(template_id="one", source="x", handler="b", seeds=(0,), num_samples=1)]
    assert len(list(regenerate(runs, workers=3))) == 5
    assert pools.workers == {"a": 3, "b": 1}  # a: 4 runs, b: 1 (each worker is a process loading the handler)


def test_a_failed_run_raises_in_order_and_every_pool_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    pools = _BarrierPools(2)
    monkeypatch.setattr(sandbox, "SandboxPool", pools.Pool)  # regeneration imports it when it runs
    runs = [*_runs(["a"]), TemplateRun(template_id="bad", source="broken", handler="b", seeds=(0,), num_samples=1)]
    seen = []
    with pytest.raises(RegenerationError, match="'bad' seed 0: error: boom"):
        for run_items in regenerate(runs):
            seen.append(run_items.run.template_id)
    assert seen == ["t0", "t0"] and sorted(pools.closed) == ["a", "b"]


@pytest.mark.slow
def test_runs_over_two_handlers_come_back_in_order_with_the_items_of_single_runs() -> None:
    curated = load_curated()
    picked = [next(t for t in curated.values() if t.handler == h) for h in ("synthetic", "glucose")]
    runs = [TemplateRun(template_id=t.id, source=t.source, handler=t.handler, seeds=(0, 3), num_samples=2)
            for t in picked]
    out = list(regenerate(runs))
    assert [(r.run.template_id, r.seed) for r in out] == [(t.id, s) for t in picked for s in (0, 3)]
    for run_items in out:
        alone = run_template(run_items.run.source, run_items.run.handler, num_samples=2, seed=run_items.seed)
        assert [i.model_dump(mode="json") for i in run_items.items] == alone.items
