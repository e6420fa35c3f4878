"""The generator: writes one template per brief, and rewrites it from feedback.

Round 1 sends the static prompt (contract, helpers, dataset, task), then the curated example
nearest the brief and the brief. A refinement continues that conversation with the previous code
as the assistant's turn and the feedback as the next user turn (only the latest attempt, so the
prompt stays short). The code is extracted from the reply (fenced or not); a reply without code,
or one that ran away (cut at the output limit, or listing values instead of computing them), is
feedback like any other failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from itemsmith.agents.authoring.context import GeneratorPrompt
from itemsmith.agents.authoring.prompts import (
    describe_profile,
    generator_system,
    generator_task,
    nearest_examples,
    refine_message,
)
from itemsmith.agents.extract import ExtractionError, extract_code, lint, runaway
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete, hit_output_limit, reply_text
from itemsmith.agents.llm.usage import CallUsage, UsageLedger
from itemsmith.agents.profile import HandlerProfile

MAX_SHOWN_REPLY = 4000


def build_prompt(profile: HandlerProfile, task: str, *, examples: int = 1,
                 restart_broken: bool = False) -> GeneratorPrompt:
    """The static prompt parts of a run; each slot gets the `examples` curated templates nearest its
    brief (0: none)."""
    return GeneratorPrompt(system=generator_system(profile), profile_text=describe_profile(profile), task=task,
                           handler_name=profile.name, examples=examples, restart_broken=restart_broken)


def first_message(prompt: GeneratorPrompt, brief: dict[str, object], accepted_titles: Sequence[str], *,
                  examples: int | None = None) -> str:
    """The first user message of a slot, with `examples` curated examples (default: the prompt's)."""
    shown = nearest_examples(brief, prompt.handler_name, limit=prompt.examples if examples is None else examples)
    return generator_task(profile_text=prompt.profile_text, task=prompt.task, brief=brief,
                          accepted_titles=accepted_titles, examples=shown)


def messages_for(prompt: GeneratorPrompt, first: str, previous: str | None, feedback: str | None) -> list[BaseMessage]:
    """Round 1: system + task. Later rounds: + the previous code + the feedback."""
    messages: list[BaseMessage] = [SystemMessage(prompt.system), HumanMessage(first)]
    if previous is not None and feedback:
        messages += [AIMessage(previous), HumanMessage(refine_message(feedback))]
    return messages


class Generated(BaseModel):
    """One generator call: the reply, the code (or why there is none), usage."""

    reply: str
    source: str | None = None
    problem: str | None = None  # extraction or lint feedback
    usage: CallUsage
    runaway: bool = False  # cut at the output limit or repeating itself: `problem` says which


RUNAWAY_SHOWN_LINES = 25


def shown_reply(generated: Generated) -> str:
    """What the assistant turn of the next refinement shows: the code, else the raw reply; of a
    runaway reply only its start (the rest would only make the next prompt long)."""
    text = generated.source.rstrip() if generated.source is not None else generated.reply
    if generated.runaway:
        lines = text.splitlines()
        head = "\n".join(line[:200] for line in lines[:RUNAWAY_SHOWN_LINES])[:MAX_SHOWN_REPLY // 2]
        text = head + f"\n# ... ({max(0, len(lines) - RUNAWAY_SHOWN_LINES)} more lines cut: the reply ran away)"
    if generated.source is not None:
        return f"```python\n{text}\n```"
    return text[:MAX_SHOWN_REPLY]


REPEAT_NUDGE = ("That is exactly the code that already failed (it was not run again). Do not send it again: change "
                "the failing line as the hint says. Reply with the whole corrected template in one ```python block.")
ESCAPE_TEMPERATURE = 0.8  # the round after a repeat: greedy-ish sampling would resend the same code again


def _ran_away(reply: AIMessage, text: str, usage: CallUsage) -> Generated | None:
    """The reply as a runaway `Generated` (with what code it has), or None when it did not run away."""
    stopped = (reply.response_metadata or {}).get("repetition")  # ended early by a local model's repetition stop
    problem = (f"the reply was stopped while repeating itself: {stopped}" if stopped else
               runaway(text, truncated=hit_output_limit(reply), output_tokens=usage.output_tokens))
    if problem is None:
        return None
    try:
        partial: str | None = extract_code(text)
    except ExtractionError:
        partial = None
    return Generated(reply=text, source=partial, problem=problem, usage=usage, runaway=True)


async def generate(handle: ModelHandle, messages: Sequence[BaseMessage], *, retry: RetryPolicy,
                   ledger: UsageLedger | None = None, temperature: float | None = None) -> Generated:
    """Call the generator and extract the template (raises only for provider errors).

    Runaway guard: a reply cut at the output limit or repeating itself is returned with
    `runaway=True` and the reason as its `problem` (it is never run). Code that repeats a failed
    attempt is the caller's to tell (`agents.authoring.graph`): it is never run again, and the next round
    samples at `ESCAPE_TEMPERATURE` (asking again within the round cost a whole reply and, measured
    on the local generator, rescued none of 6 repeats).
    """
    reply, usage = await complete(handle, messages, retry=retry, ledger=ledger, role="generator",
                                  temperature=temperature)
    text = reply_text(reply)
    ran_away = _ran_away(reply, text, usage)
    if ran_away is not None:
        return ran_away
    try:
        source = extract_code(text)
    except ExtractionError as exc:
        return Generated(reply=text, problem=str(exc), usage=usage)
    return Generated(reply=text, source=source, problem=lint(source), usage=usage)
