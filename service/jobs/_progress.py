"""The live summary of an authoring job, folded from its slots' progress events."""

from __future__ import annotations

from typing import Any

from itemsmith.agents.authoring.context import SlotEvent

__all__ = ["AuthorProgress"]

# the stage a round was rejected at, by the phase the slot was in before it refined or was discarded
_REJECTING_STAGE = {"generating": "generation", "checking": "structure", "verifying": "verification"}
_FINAL = ("accepted", "discarded", "failed")


class AuthorProgress:
    """Templates queued, in flight, accepted, discarded, failed; rounds rejected per stage
    (``generation``: no usable code, ``structure``: the sandbox check, ``verification``: the
    judge panel or the student pool); tokens and cost. Replaying a job's earlier events first
    (`apply` each) carries the counts over a resume."""

    def __init__(self) -> None:
        self._last: dict[int, SlotEvent] = {}
        self._usage: dict[int, SlotEvent] = {}  # per slot, the event with the most tokens so far
        self._rejected: dict[str, int] = {}
        self.stored = 0

    def apply(self, event: SlotEvent) -> None:
        previous = self._last.get(event.slot)
        if event.phase in ("refining", "discarded") and previous is not None:
            stage = _REJECTING_STAGE.get(previous.phase)
            if stage is not None:
                self._rejected[stage] = self._rejected.get(stage, 0) + 1
        self._last[event.slot] = event
        # a slot's usage only grows, but a resumed run announces unfinished slots with none
        best = self._usage.get(event.slot)
        if best is None or event.input_tokens + event.output_tokens >= best.input_tokens + best.output_tokens:
            self._usage[event.slot] = event

    def summary(self) -> dict[str, Any]:
        phases = [event.phase for event in self._last.values()]
        usage = list(self._usage.values())
        return {
            "slots": len(phases),
            "queued": phases.count("queued"),
            "in_flight": sum(phase not in (*_FINAL, "queued") for phase in phases),
            "accepted": phases.count("accepted"),
            "discarded": phases.count("discarded"),
            "failed": phases.count("failed"),
            "rejected_by_stage": dict(sorted(self._rejected.items())),
            "stored": self.stored,
            "input_tokens": sum(e.input_tokens for e in usage),
            "output_tokens": sum(e.output_tokens for e in usage),
            "cost_usd": None if any(e.cost_usd is None for e in usage)
            else round(sum(e.cost_usd or 0.0 for e in usage), 6),
            "in_flight_titles": [e.title for e in self._last.values() if e.phase not in (*_FINAL, "queued")],
        }
