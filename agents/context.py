"""What every node of the authoring graph can use but the checkpointer never stores: the model,
the sandbox check, the verifiers, the static prompt parts, the event sink."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from itemsmith.agents.inference import ModelHandle, RetryPolicy
from itemsmith.agents.profile import HandlerProfile
from itemsmith.agents.usage import UsageLedger
from itemsmith.agents.verify import Verifier
from itemsmith.templates_bank.items.schema import StructureReport

Phase = Literal["queued", "generating", "checking", "verifying", "refining", "accepted", "discarded", "failed"]


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


@dataclass(frozen=True)
class GeneratorPrompt:
    """The parts of the generator prompt shared by every slot of a run."""

    system: str
    profile_text: str
    examples_text: str
    task: str
    handler_name: str = ""
    example_ids: tuple[str, ...] = ()
    match_examples: bool = True


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

    def emit(self, event: SlotEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)
