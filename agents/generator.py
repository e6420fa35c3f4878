"""The generator: writes one template per brief, and rewrites it from feedback.

Round 1 sends the static prompt (contract, helpers, dataset, examples, task) with the brief
last. A refinement continues that conversation with the previous code as the assistant's turn
and the feedback as the next user turn (only the latest attempt, so the prompt stays short).
The code is extracted from the reply (fenced or not); a reply without code is feedback like
any other failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from itemsmith.agents.context import GeneratorPrompt
from itemsmith.agents.extract import ExtractionError, extract_code, lint
from itemsmith.agents.inference import ModelHandle, RetryPolicy, complete, reply_text
from itemsmith.agents.profile import HandlerProfile
from itemsmith.agents.prompts import (
    describe_examples,
    describe_profile,
    generator_system,
    generator_task,
    matching_example,
    pick_examples,
    refine_message,
)
from itemsmith.agents.usage import CallUsage, UsageLedger
from itemsmith.templates_bank.curated import load_curated

MAX_SHOWN_REPLY = 4000


def build_prompt(profile: HandlerProfile, task: str, *, examples: int = 2) -> GeneratorPrompt:
    """The static prompt parts of a run (`examples` = 0: no curated examples at all)."""
    chosen = pick_examples(profile.name, limit=examples) if examples else []
    return GeneratorPrompt(system=generator_system(profile), profile_text=describe_profile(profile),
                           examples_text=describe_examples(chosen), task=task, handler_name=profile.name,
                           example_ids=tuple(t.id for t in chosen), match_examples=examples > 0)


def first_message(prompt: GeneratorPrompt, brief: dict[str, object], accepted_titles: Sequence[str]) -> str:
    matching = None
    if prompt.match_examples:
        shown = [t for t in load_curated().values() if t.id in prompt.example_ids]
        matching = matching_example(brief, prompt.handler_name, exclude=shown)
    return generator_task(profile_text=prompt.profile_text, examples_text=prompt.examples_text, task=prompt.task,
                          brief=brief, accepted_titles=accepted_titles, matching=matching)


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
    repeated: bool = False  # the first reply repeated failed code and was asked again


def shown_reply(generated: Generated) -> str:
    """What the assistant turn of the next refinement shows: the code, else the raw reply."""
    if generated.source is not None:
        return f"```python\n{generated.source.rstrip()}\n```"
    return generated.reply[:MAX_SHOWN_REPLY]


REPEAT_NUDGE = ("That is exactly the code that already failed. Do not send it again: change the failing line as the "
                "hint says. Reply with the whole corrected template in one ```python block.")
ESCAPE_TEMPERATURE = 0.8


def _combine(first: CallUsage, second: CallUsage) -> CallUsage:
    cost = None if first.cost_usd is None or second.cost_usd is None else first.cost_usd + second.cost_usd
    return first.model_copy(update={
        "input_tokens": first.input_tokens + second.input_tokens,
        "output_tokens": first.output_tokens + second.output_tokens, "cost_usd": cost,
        "latency_s": first.latency_s + second.latency_s, "retries": first.retries + second.retries})


async def generate(handle: ModelHandle, messages: Sequence[BaseMessage], *, retry: RetryPolicy,
                   ledger: UsageLedger | None = None, failed: Sequence[str] = ()) -> Generated:
    """Call the generator and extract the template (raises only for provider errors).

    Repeat guard: when the code is exactly one of `failed` (small models often resend the code
    they were asked to fix), ask once more within the same round, at a higher temperature.
    """
    reply, usage = await complete(handle, messages, retry=retry, ledger=ledger, role="generator")
    text = reply_text(reply)
    try:
        source = extract_code(text)
    except ExtractionError as exc:
        return Generated(reply=text, problem=str(exc), usage=usage)
    if failed and source.strip() in {f.strip() for f in failed}:
        nudged = [*messages, AIMessage(text), HumanMessage(REPEAT_NUDGE)]
        again, more = await complete(handle, nudged, retry=retry, ledger=ledger, role="generator",
                                     temperature=ESCAPE_TEMPERATURE)
        usage = _combine(usage, more)
        text = reply_text(again)
        try:
            source = extract_code(text)
        except ExtractionError as exc:
            return Generated(reply=text, problem=str(exc), usage=usage, repeated=True)
        problem = lint(source)
        return Generated(reply=text, source=source, problem=problem, usage=usage, repeated=True)
    problem = lint(source)
    return Generated(reply=text, source=source, problem=problem, usage=usage)
