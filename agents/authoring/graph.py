"""The authoring loop of one template slot, as a LangGraph `StateGraph`.

::

    START -> generate -> check (structure, sandbox) -> verify (item audit, then later stages) -> accept -> END
                ^   |           |                        |
                |   +-----------+------------------------+--> discard -> END (round limit)
                +---- refine with the feedback (round < max_rounds)

`verify` runs `ctx.verifiers` in order: the item audit first (always; blind solvers over a few
hundred fresh-seed items, see `agents.stages.verification_stages.ItemAuditVerifier`), then the content
stages, which read the audit's fresh-seed items, never the structure check's. A provider that
fails for good (a permanent error, retries or the wait bound exhausted) ends the slot as
`errored` with the provider's message, never as a rejection and never as feedback: in `generate`
(the round is not used up) or in a stage that could not decide (`VerificationResult.errored`; the
candidate and its structure report are kept). An errored slot is not final: the next run of the
same run id enters it where it stopped (`retry_at`: generate, or verify on the same candidate).
A reply with no code, a runaway reply (cut at the output limit or repeating itself: never run), code
that already failed (never run again; the next refinement samples at a higher temperature), a lint
problem, a failed structure check and a verifier's rejection all become feedback for the next
round; after `max_rounds` rounds the slot is discarded. With `GeneratorPrompt.restart_broken` (the
default for a local generator) a round after code that did not run, or was resent, starts afresh
from the brief without the curated example instead of refining that code (sampled at
`ESCAPE_TEMPERATURE` when that prompt is the last round's: as cool, it would give the same code).
Each slot is one checkpointer thread, so a killed run resumes mid-slot.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from itemsmith.agents.authoring.context import Activity, Phase, SlotContext, SlotEvent
from itemsmith.agents.authoring.generator import (
    ESCAPE_TEMPERATURE,
    REPEAT_NUDGE,
    first_message,
    generate,
    messages_for,
    shown_reply,
)
from itemsmith.agents.authoring.models import Attempt
from itemsmith.agents.authoring.prompts import copied_example
from itemsmith.agents.authoring.state import SlotState
from itemsmith.agents.errors import EmptyReplyError, ProviderCallError
from itemsmith.agents.feedback import build_feedback, runaway_feedback
from itemsmith.agents.llm.inference import stream_tokens
from itemsmith.agents.stages.verify import run_stages
from itemsmith.items.schema import Decision, StructureReport


def _emit(ctx: SlotContext, state: SlotState, phase: Phase, *, round_: int | None = None,
          extra: list[dict[str, Any]] | None = None, message: str | None = None) -> None:
    attempts = list(state.get("attempts") or []) + list(extra or [])
    cost: float | None = 0.0
    for a in attempts:
        cost = None if cost is None or a.get("cost_usd") is None else cost + a["cost_usd"]
    ctx.emit(SlotEvent(slot=state["slot"], title=state["brief"]["title"], phase=phase,
                       round=state.get("round", 0) if round_ is None else round_,
                       input_tokens=sum(a.get("input_tokens", 0) for a in attempts),
                       output_tokens=sum(a.get("output_tokens", 0) for a in attempts), cost_usd=cost,
                       message=message))


def _earlier(state: SlotState, source: str | None) -> dict[str, Any] | None:
    """The earlier attempt with exactly this code, if any (small models often resend it)."""
    if not source:
        return None
    return next((a for a in state.get("attempts") or [] if a.get("source") and a["source"].strip() == source.strip()),
                None)


def _repeated(state: SlotState, source: str | None) -> list[str]:
    """A note when the model sent code it already sent."""
    earlier = _earlier(state, source)
    if earlier is None:
        return []
    return [f"Note: this is exactly the code of round {earlier['round']}, which failed the same way. "
            "Change the failing line."]


def _repeat_problem(earlier: dict[str, Any]) -> tuple[str, str]:
    """(error, feedback) of a round that resent the failed code of `earlier`: that round and its
    error, its feedback again, then `REPEAT_NUDGE`."""
    round_, error = earlier["round"], earlier.get("error") or earlier.get("status") or "it failed"
    failed = earlier.get("feedback") or f"Error: {error}"
    return (f"resent the code of round {round_} (not run again), which failed: {error}",
            f"{failed}\nNote: this is exactly the code of round {round_}. {REPEAT_NUDGE}")


def _restarts(ctx: SlotContext, previous: dict[str, Any]) -> bool:
    """Whether this round starts afresh (`GeneratorPrompt.restart_broken`): the last code did not
    run, or was resent (a content rejection is refined: that code runs)."""
    return ctx.prompt.restart_broken and previous.get("status") != "verify_rejected"


async def generate_node(state: SlotState, runtime: Runtime[SlotContext]) -> dict[str, Any]:
    ctx = runtime.context
    started = time.monotonic()
    round_ = state.get("round", 0) + 1
    first = state.get("first_prompt") or first_message(ctx.prompt, state["brief"], ctx.accepted_titles())
    attempts = state.get("attempts") or []
    previous = attempts[-1] if attempts else {}
    refining = round_ > 1 and bool(state.get("feedback"))
    restart = refining and _restarts(ctx, previous)
    hot = refining and bool(previous.get("repeated"))
    if restart:  # the same brief from a prompt without the curated example, not a fix of the broken code
        fresh = first_message(ctx.prompt, state["brief"], ctx.accepted_titles(), examples=0)
        hot, first, refining = fresh == first, fresh, False  # the same prompt, as cool, would give the same code
    last_error = (state.get("feedback") or "").splitlines()[0] if refining else None
    _emit(ctx, state, "refining" if refining else "generating", round_=round_, message=last_error)
    messages = messages_for(ctx.prompt, first, state.get("reply_shown") if refining else None,
                            state.get("feedback") if refining else None)
    update: dict[str, Any] = {"round": round_, "first_prompt": first, "source": None, "current": {},
                              "retry_at": None, "status": "running", "error": None}
    try:
        slot = state["slot"]

        def streamed(tokens: int, prompt_tokens: int | None = None) -> None:
            ctx.activity(Activity(phase="authoring", slot=slot, round=round_, tokens=tokens,
                                  prompt_tokens=prompt_tokens))

        temperature = ESCAPE_TEMPERATURE if hot else None
        with stream_tokens(streamed) if ctx.on_activity is not None else nullcontext():
            generated = await generate(ctx.model, messages, retry=ctx.retry, ledger=ctx.ledger,
                                       temperature=temperature)
    except ProviderCallError as exc:
        attempt = Attempt(round=round_, status="provider_error", error=str(exc), retries=exc.attempts - 1,
                          llm_s=time.monotonic() - started)
        _emit(ctx, state, "errored", round_=round_, extra=[attempt.model_dump()], message=str(exc))
        return {**update, "round": round_ - 1, "status": "errored", "retry_at": "generate", "error": str(exc),
                "attempts": [attempt.model_dump()], "elapsed_s": time.monotonic() - started}
    except EmptyReplyError as exc:
        feedback = build_feedback(f"{exc}; reply with the whole template in one ```python block", None)
        attempt = Attempt(round=round_, status="extraction_error", error=str(exc), feedback=feedback,
                          llm_s=time.monotonic() - started)
        return {**update, "feedback": feedback, "reply_shown": "(empty reply)", "attempts": [attempt.model_dump()],
                "elapsed_s": time.monotonic() - started}
    usage = generated.usage
    earlier = None if generated.runaway else _earlier(state, generated.source)
    copied = (copied_example(generated.source, first, ctx.prompt.handler_name)
              if generated.source is not None and generated.problem is None and earlier is None else None)
    attempt = Attempt(round=round_, source=generated.source, status="generated", input_tokens=usage.input_tokens,
                      cached_input_tokens=usage.cached_input_tokens, cache_write_tokens=usage.cache_write_tokens,
                      output_tokens=usage.output_tokens, cost_usd=usage.cost_usd, llm_s=usage.latency_s,
                      retries=usage.retries, repeated=earlier is not None, restarted=restart)
    update["reply_shown"] = shown_reply(generated)
    if generated.problem is not None or earlier is not None or copied is not None:
        problem = generated.problem or (f"the template copies the curated example {copied.title!r}: write a new "
                                        "template for this brief (the example only shows the API)" if copied else "")
        if generated.runaway:  # a failed round that never reaches the sandbox
            feedback = runaway_feedback(problem, _repeated(state, generated.source))
            status = "runaway"
        elif earlier is not None:  # failed code sent again: it is not run again
            problem, feedback = _repeat_problem(earlier)
            status = "repeated"
        else:
            feedback = build_feedback(problem, generated.source, ctx.profile, examples=first)
            status = "extraction_error" if generated.source is None else "copied" if copied else "lint"
        attempt = attempt.model_copy(update={"status": status, "error": problem, "feedback": feedback})
        return {**update, "feedback": feedback, "attempts": [attempt.model_dump()],
                "elapsed_s": time.monotonic() - started}
    return {**update, "source": generated.source, "feedback": None, "current": attempt.model_dump(),
            "elapsed_s": time.monotonic() - started}


async def check_node(state: SlotState, runtime: Runtime[SlotContext]) -> dict[str, Any]:
    ctx = runtime.context
    started = time.monotonic()
    source = state["source"] or ""
    _emit(ctx, state, "checking", extra=[state.get("current") or {}])
    report = await ctx.check(source)
    attempt = Attempt.model_validate(state["current"]).model_copy(
        update={"status": report.status.value, "check_s": report.elapsed_ms / 1000, "error": report.error})
    if report.passed:
        first_pass = state.get("structure_passed_round") or state["round"]
        return {"report": report.model_dump(mode="json"), "structure_passed_round": first_pass,
                "current": attempt.model_dump(), "elapsed_s": time.monotonic() - started}
    feedback = build_feedback(report.error or f"the template ended with status {report.status.value}", source,
                              ctx.profile, examples=state.get("first_prompt") or "")
    attempt = attempt.model_copy(update={"feedback": feedback})
    return {"report": report.model_dump(mode="json", exclude={"items"}), "feedback": feedback, "current": {},
            "attempts": [attempt.model_dump()], "elapsed_s": time.monotonic() - started}


async def verify_node(state: SlotState, runtime: Runtime[SlotContext]) -> dict[str, Any]:
    ctx = runtime.context
    started = time.monotonic()
    _emit(ctx, state, "verifying", extra=[state.get("current") or {}])
    report = StructureReport.model_validate(state["report"])
    source = state["source"] or ""
    decision, feedback, results = await run_stages(
        ctx.verifiers, source, report, on_stage=lambda stage: ctx.activity(
            Activity(phase="authoring", slot=state["slot"], round=state.get("round", 0), stage=stage)))
    attempt = Attempt.model_validate(state["current"]).model_copy(update={"verification": results})
    if results and results[-1].errored:  # no verdict: keep the candidate and its items for the retry
        reasons = "; ".join(decision.reasons)
        attempt = attempt.model_copy(update={"status": "verify_errored", "error": reasons})
        _emit(ctx, state, "errored", extra=[attempt.model_dump(mode="json")], message=reasons)
        return {"status": "errored", "retry_at": "verify", "error": reasons,
                "attempts": [attempt.model_dump(mode="json")], "elapsed_s": time.monotonic() - started}
    compact = report.model_dump(mode="json", exclude={"items"}) | {"n_items": len(report.items)}
    update: dict[str, Any] = {"decision": decision.model_dump(mode="json"), "report": compact, "current": {},
                              "retry_at": None, "status": "running", "error": None}
    if decision.accepted:
        attempt = attempt.model_copy(update={"status": "ok"})
    else:
        reasons = "; ".join(decision.reasons) or f"rejected at {decision.stage}"
        attempt = attempt.model_copy(update={"status": "verify_rejected", "error": reasons, "feedback": feedback})
        update["feedback"] = feedback
    return {**update, "attempts": [attempt.model_dump(mode="json")], "elapsed_s": time.monotonic() - started}


async def accept_node(state: SlotState, runtime: Runtime[SlotContext]) -> dict[str, Any]:
    _emit(runtime.context, state, "accepted")
    return {"status": "accepted"}


async def discard_node(state: SlotState, runtime: Runtime[SlotContext]) -> dict[str, Any]:
    attempts = state.get("attempts") or []
    last = attempts[-1] if attempts else {}
    decision = state.get("decision")
    if not decision or decision.get("accepted"):
        stage = "structure" if last.get("status") != "verify_rejected" else "judges"
        decision = Decision(accepted=False, stage=stage,  # type: ignore[arg-type]
                            reasons=[f"no passing template after {state.get('round', 0)} round(s)",
                                     f"last error: {last.get('error') or last.get('status')}"]).model_dump(mode="json")
    _emit(runtime.context, state, "discarded", message=last.get("error"))
    return {"status": "discarded", "decision": decision}


def _entry(state: SlotState) -> str:
    """Where a slot starts: an errored slot where it stopped, any other at `generate`."""
    return "verify" if state.get("retry_at") == "verify" and state.get("source") else "generate"


def _after_generate(state: SlotState, max_rounds: int) -> str:
    if state.get("status") in ("failed", "errored"):
        return END
    if state.get("source"):
        return "check"
    return "generate" if state.get("round", 0) < max_rounds else "discard"


def _after_check(state: SlotState, max_rounds: int) -> str:
    if (state.get("report") or {}).get("status") == "ok":
        return "verify"
    return "generate" if state.get("round", 0) < max_rounds else "discard"


def _after_verify(state: SlotState, max_rounds: int) -> str:
    if state.get("status") == "errored":
        return END
    if (state.get("decision") or {}).get("accepted"):
        return "accept"
    if state.get("feedback") and state.get("round", 0) < max_rounds:
        return "generate"
    return "discard"


def build_slot_graph(*, max_rounds: int = 3, checkpointer: Checkpointer = None) -> Any:
    """The compiled slot graph; `max_rounds` bounds generate/refine rounds (>= 1)."""
    if max_rounds < 1:
        raise ValueError("max_rounds must be >= 1")
    graph = StateGraph(SlotState, context_schema=SlotContext)
    graph.add_node("generate", generate_node)
    graph.add_node("check", check_node)
    graph.add_node("verify", verify_node)
    graph.add_node("accept", accept_node)
    graph.add_node("discard", discard_node)
    graph.add_conditional_edges(START, _entry, ["generate", "verify"])
    graph.add_conditional_edges("generate", lambda s: _after_generate(s, max_rounds), ["check", "generate", "discard", END])
    graph.add_conditional_edges("check", lambda s: _after_check(s, max_rounds), ["verify", "generate", "discard"])
    graph.add_conditional_edges("verify", lambda s: _after_verify(s, max_rounds),
                                ["accept", "generate", "discard", END])
    graph.add_edge("accept", END)
    graph.add_edge("discard", END)
    return graph.compile(checkpointer=checkpointer, name="itemsmith-slot")
