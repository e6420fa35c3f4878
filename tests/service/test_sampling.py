"""Sandbox work for sample items is bounded per owner and shared fairly
(`service.sampling.FairGate`), and cached per version, handler, count and seed
(`TemplateSampler`). The runs here are stand-ins that block on events (what is under test is the
scheduling, not the sandbox); `tests/api/test_request_capacity.py` runs real templates."""

from __future__ import annotations

import threading

import pytest

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import RunResult
from itemsmith.service.sampling import FairGate, SamplerBusy, TemplateSampler
from itemsmith.service.settings import ServiceSettings

from ..support import wait_until


def _waiting(gate: FairGate) -> list[str]:
    with gate._condition:
        return [w.owner for w in gate._waiting]


def _acquire_in_thread(gate: FairGate, owner: str, got: list[str]) -> threading.Thread:
    def acquire() -> None:
        try:
            gate.acquire(owner)
        except SamplerBusy:
            got.append(f"busy {owner}")
            return
        got.append(owner)

    thread = threading.Thread(target=acquire, daemon=True)
    thread.start()
    return thread


def test_one_owner_never_takes_every_slot_and_a_freed_slot_goes_to_the_owner_with_fewest() -> None:
    gate = FairGate(total=3, per_owner=2, queue_per_owner=5, wait_s=30)
    gate.acquire("alice")
    gate.acquire("alice")
    got: list[str] = []
    third = _acquire_in_thread(gate, "alice", got)  # over alice's share: waits with a slot still free
    wait_until(lambda: _waiting(gate) == ["alice"], "alice to wait at the gate")
    gate.acquire("bob")  # the free slot is bob's at once
    assert gate.in_flight() == {"alice": 2, "bob": 1} and got == []
    carol = _acquire_in_thread(gate, "carol", got)  # waits: every slot is taken
    wait_until(lambda: sorted(_waiting(gate)) == ["alice", "carol"], "alice and carol to wait")
    gate.release("alice")  # alice (1 in flight, waited first) vs carol (0): carol's turn
    carol.join(5)
    assert got == ["carol"]
    gate.release("bob")
    third.join(5)
    assert got == ["carol", "alice"] and gate.in_flight() == {"alice": 2, "carol": 1}


def test_a_full_queue_or_a_long_wait_is_busy_and_leaves_no_trace() -> None:
    gate = FairGate(total=1, per_owner=1, queue_per_owner=1, wait_s=0.2)
    gate.acquire("alice")
    got: list[str] = []
    waiter = _acquire_in_thread(gate, "alice", got)
    wait_until(lambda: _waiting(gate) == ["alice"], "alice to wait at the gate")
    with pytest.raises(SamplerBusy) as full:
        gate.acquire("alice")  # one waiting already: refused at once
    assert "waiting already" in str(full.value) and full.value.retry_after_s >= 1
    with pytest.raises(SamplerBusy, match="no sandbox slot freed"):
        gate.acquire("bob")  # waits 0.2 s for the one slot, in vain
    waiter.join(5)
    assert got == ["busy alice"]  # alice's waiter timed out too
    assert _waiting(gate) == [] and gate.in_flight() == {"alice": 1}
    gate.release("alice")
    gate.acquire("bob")
    assert gate.in_flight() == {"bob": 1}


class _Runs:
    """A stand-in for the sandbox: counts runs, and blocks those of a source until released."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []
        self.release = threading.Event()

    def __call__(self, source: str, handler: str, num_samples: int, seed: int) -> RunResult:
        self.calls.append((source, num_samples, seed))
        if source == "slow":
            assert self.release.wait(10)
        return RunResult(status=RunStatus.ok, items=[{"n": num_samples, "seed": seed}])


@pytest.fixture
def sampler(monkeypatch: pytest.MonkeyPatch) -> tuple[TemplateSampler, _Runs]:
    sampler = TemplateSampler(ServiceSettings(sample_workers=2, sample_runs_per_owner=1, sample_queue_per_owner=2))
    runs = _Runs()
    monkeypatch.setattr(sampler, "_run", runs)
    return sampler, runs


def _sample(sampler: TemplateSampler, owner: str, source: str, seed: int = 0) -> RunResult:
    return sampler.sample(owner, source=source, content_hash=f"hash-{source}", handler="synthetic", num_samples=3,
                          seed=seed)


def test_samples_are_cached_per_version_and_seed_and_concurrent_requests_share_one_run(sampler) -> None:
    sampler, runs = sampler
    assert _sample(sampler, "alice", "fast").items == _sample(sampler, "bob", "fast").items
    assert len(runs.calls) == 1
    _sample(sampler, "alice", "fast", seed=1)
    assert len(runs.calls) == 2  # another seed, another run
    results: list[RunResult] = []
    threads = [threading.Thread(target=lambda: results.append(_sample(sampler, "alice", "slow"))) for _ in range(5)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(runs.calls) == 3, "three runs to start")
    runs.release.set()
    for thread in threads:
        thread.join(10)
    assert len(results) == 5 and len(runs.calls) == 3  # five requests, one run


def test_a_busy_refusal_is_not_cached(sampler) -> None:
    sampler, runs = sampler
    blocker = threading.Thread(target=lambda: _sample(sampler, "alice", "slow"))
    blocker.start()
    wait_until(lambda: sampler.gate.in_flight() == {"alice": 1}, "alice's run to hold the gate")
    sampler.gate.queue_per_owner = 0
    with pytest.raises(SamplerBusy):
        _sample(sampler, "alice", "other")
    runs.release.set()
    blocker.join(10)
    sampler.gate.queue_per_owner = 2
    assert _sample(sampler, "alice", "other").status is RunStatus.ok
