"""What every node of the authoring graph can use but the checkpointer never stores: the model,
the sandbox check, the verifiers, the static prompt parts, the event sink."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy
from itemsmith.agents.llm.usage import UsageLedger
from itemsmith.agents.profile import HandlerProfile
from itemsmith.agents.stages.verify import Verifier
from itemsmith.items.schema import StructureReport

Phase = Literal["queued", "generating", "checking", "verifying", "refining", "accepted", "discarded", "errored", "failed"]
RunPhase = Literal["profiling", "planning", "authoring", "reporting", "done", "finished earlier"]


class SlotEvent(BaseModel):
    """A progress event of one slot (for the CLI display, logs, the API)."""

    slot: int
    title: str
    phase: Phase
    round: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    message: str | None = None


class Activity(BaseModel):
    """What the run is doing now, for live displays (never stored, never a job event): a change of
    the run's phase; during planning or a slot's generator call, the output tokens streamed so far;
    during a slot's verification, the stage that runs (``auditing``, ``judging``, ``students``)."""

    phase: RunPhase
    slot: int | None = None
    round: int = 0
    tokens: int | None = Field(None, ge=0, description="output tokens of the model call in flight")
    prompt_tokens: int | None = Field(None, ge=0, description="prompt tokens the call in flight reads before its "
                                                              "first output token (local models)")
    stage: str | None = None


@dataclass(frozen=True)
class GeneratorPrompt:
    """The parts of the generator prompt shared by every slot of a run, how many curated examples
    each slot gets (those nearest its brief), and whether a round after code that did not run (or
    was resent) starts afresh from the brief without them (`restart_broken`) instead of refining
    that code."""

    system: str
    profile_text: str
    task: str
    handler_name: str = ""
    examples: int = 1
    restart_broken: bool = False


@dataclass
class SlotContext:
    """Run-scoped dependencies of the slot graph (LangGraph runtime context)."""

    model: ModelHandle
    prompt: GeneratorPrompt
    check: Callable[[str], Awaitable[StructureReport]]
    profile: HandlerProfile | None = None
    verifiers: Sequence[Verifier] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_rounds: int = 3
    ledger: UsageLedger = field(default_factory=UsageLedger)
    accepted_titles: Callable[[], list[str]] = list
    on_event: Callable[[SlotEvent], None] | None = None
    on_activity: Callable[[Activity], None] | None = None

    def emit(self, event: SlotEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def activity(self, activity: Activity) -> None:
        if self.on_activity is not None:
            self.on_activity(activity)
