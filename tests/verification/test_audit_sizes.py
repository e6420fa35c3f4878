"""The audit's extra run at twice the first size stays within the sandbox's output limit."""

from __future__ import annotations

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import RunResult, SandboxLimits
from itemsmith.verification.audit.sandboxed import _larger


def first_run(n_items: int, values_per_item: int) -> RunResult:
    item = {"question": "q", "options": ["a", "b"], "answer_index": 0,
            "series": [{"name": "ecg", "values": [0.5] * values_per_item}]}
    return RunResult(status=RunStatus.ok, items=[item] * n_items)


def test_small_items_run_at_twice_the_size() -> None:
    assert _larger(30, first_run(30, 40), SandboxLimits()) == [60]


def test_large_items_are_capped_by_the_output_limit_as_the_sandbox_counts_it() -> None:
    limits = SandboxLimits()
    (larger,) = _larger(15, first_run(15, 3600), limits) or [0]
    assert 15 < larger < 2 * 15 and larger * 3600 * 24 <= limits.output_bytes / 2  # 24 bytes per number
    assert _larger(20, first_run(20, 3600), limits) == []  # already at the cap: no larger run


def test_no_larger_run_after_a_failed_first_run() -> None:
    assert _larger(30, RunResult(status=RunStatus.error, error="boom"), SandboxLimits()) == []
