"""The live progress of a run: a clock that ticks between events, the phase line, streamed token
counts, the same as lines without a live display."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from pathlib import Path

from langchain_core.messages import HumanMessage
from rich.console import Console

from itemsmith.agents.authoring.context import Activity, SlotEvent
from itemsmith.agents.authoring.progress import ProgressTable
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.inference import RetryPolicy, complete, stream_tokens
from itemsmith.agents.llm.usage import UsageLedger

from ..conftest import GOOD, fenced, plan_reply, scripted


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=160, force_terminal=False, color_system=None), out


def _rendered(progress: ProgressTable) -> str:
    console, out = _console()
    console.print(progress)  # what Live's own refresh draws: the renderable itself
    return out.getvalue()


def test_progress_clock_ticks_without_events() -> None:
    clock = FakeClock()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=_console()[0])
    progress.activity(Activity(phase="planning"))
    first = _rendered(progress)
    clock.now += 199
    second = _rendered(progress)
    assert "(0 s)" in first and "planning" in first
    assert "(3 min 19 s)" in second and "planning" in second


def test_phase_line_shows_streamed_tokens_and_rate() -> None:
    clock = FakeClock()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=_console()[0])
    progress.activity(Activity(phase="authoring"))
    progress(SlotEvent(slot=2, title="Peak level", phase="generating", round=1))
    progress(SlotEvent(slot=0, title="Mean level", phase="verifying", round=1))
    progress.activity(Activity(phase="authoring", slot=0, round=1, stage="judging"))
    progress.activity(Activity(phase="authoring", slot=2, round=1, tokens=0))
    clock.now += 10
    progress.activity(Activity(phase="authoring", slot=2, round=1, tokens=812))
    assert progress.phase() == "verifying slot 0 round 1: judging; generating slot 2 round 1: 812 tokens (81 tok/s)"
    assert "+812" in _rendered(progress)


def test_eta_from_the_time_per_finished_slot() -> None:
    clock = FakeClock()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=_console()[0])
    progress(SlotEvent(slot=0, title="Finished before", phase="accepted", round=1))  # replayed on a resume
    progress.activity(Activity(phase="authoring"))
    for slot in (1, 2, 3):
        progress(SlotEvent(slot=slot, title=f"T{slot}", phase="queued"))
    assert progress.status().eta_s is None  # nothing measured yet
    clock.now += 60
    progress(SlotEvent(slot=1, title="T1", phase="accepted", round=2))
    status = progress.status()
    assert (status.done, status.slots) == (2, 4)
    assert status.eta_s == 120.0  # 60 s per slot finished in this session, two to go


def test_eta_of_concurrent_slots_counts_down_while_the_last_one_runs() -> None:
    clock = FakeClock()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=_console()[0])
    progress.activity(Activity(phase="authoring"))
    for slot in (0, 1):
        progress(SlotEvent(slot=slot, title=f"T{slot}", phase="generating", round=1))
    clock.now += 30
    progress(SlotEvent(slot=2, title="T2", phase="generating", round=1))
    clock.now += 30
    progress(SlotEvent(slot=0, title="T0", phase="accepted", round=1))  # 60 s per slot
    assert progress.status().eta_s == 30.0  # slot 1 is due now, slot 2 ran 30 of its 60 s
    clock.now += 20
    assert progress.status().eta_s == 10.0


def test_no_live_prints_phase_changes_and_status_lines() -> None:
    clock = FakeClock()
    console, out = _console()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=console)
    progress.activity(Activity(phase="planning"))
    clock.now += 45
    progress.activity(Activity(phase="planning", tokens=300))
    progress.tick()
    progress.activity(Activity(phase="authoring"))
    progress(SlotEvent(slot=0, title="Mean level", phase="generating", round=1))
    progress.activity(Activity(phase="authoring", slot=0, round=1, tokens=40))
    progress.tick()
    lines = out.getvalue().splitlines()
    assert lines[0] == "[0 s] planning"
    assert lines[1] == "[45 s] planning: 300 tokens | 0/0 done, 0 accepted | tokens in/out 0/300 | ETA ?"
    assert lines[2] == "[45 s] authoring"
    assert lines[3] == "[45 s] slot 0 round 1: generating"
    assert "generating slot 0 round 1: 40 tokens" in lines[4] and "tokens in/out 0/40" in lines[4]


def test_a_local_call_reading_its_prompt_says_so_then_counts_tokens_from_the_first() -> None:
    clock = FakeClock()
    console, out = _console()
    progress = ProgressTable(max_rounds=3, live=False, clock=clock, console=console)
    progress.activity(Activity(phase="authoring"))
    progress(SlotEvent(slot=0, title="Mean level", phase="generating", round=1))
    progress.activity(Activity(phase="authoring", slot=0, round=1, tokens=0, prompt_tokens=3712))
    clock.now += 95
    assert progress.phase() == "generating slot 0 round 1: reading the prompt, 3712 tokens (1 min 35 s)"
    progress.activity(Activity(phase="authoring", slot=0, round=1, tokens=0))  # the first token
    clock.now += 10
    progress.activity(Activity(phase="authoring", slot=0, round=1, tokens=80))
    # the rate counts from the first token, not from the start of the prompt
    assert progress.phase() == "generating slot 0 round 1: 80 tokens (8 tok/s)"


def test_no_live_ticker_thread_prints_while_the_run_works() -> None:
    printed = threading.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            if "tokens in/out" in text:
                printed.set()
            return super().write(text)

    out = Out()
    progress = ProgressTable(max_rounds=3, live=False, console=Console(file=out, width=160), interval_s=0.01)
    with progress:
        progress.activity(Activity(phase="profiling"))
        assert printed.wait(30), out.getvalue()
    assert "profiling the handler | 0/0 done" in out.getvalue()


def test_scripted_stream_reports_tokens_and_keeps_the_usage() -> None:
    reply = "x" * 40
    handle = scripted({"replies": [{"content": reply, "usage": {"input_tokens": 7, "output_tokens": 11}}],
                       "stream_chars": 4})
    counts: list[int] = []
    ledger = UsageLedger()

    async def call() -> None:
        with stream_tokens(counts.append):
            message, usage = await complete(handle, [HumanMessage("go")], retry=RetryPolicy(), ledger=ledger)
        assert message.content == reply
        assert (usage.input_tokens, usage.output_tokens) == (7, 11)  # the provider's usage, not the count

    asyncio.run(call())
    # one count per chunk (ten of text, LangChain may close with an empty one), then the provider's count
    assert counts[:-1] == list(range(len(counts) - 1)) and len(counts) >= 12 and counts[-1] == 11
    assert ledger.totals().output_tokens == 11


def _recorder() -> tuple[list[Activity], Callable[[Activity], None]]:
    seen: list[Activity] = []
    return seen, seen.append


def test_scripted_run_reports_planning_and_generation_tokens(pool, handler_file: Path, tmp_path: Path) -> None:
    activities, on_activity = _recorder()
    config = AuthorConfig(handler=str(handler_file), task="water levels", templates=1, slots=1,
                          out_dir=tmp_path / "out", checkpoint=str(tmp_path / "ck.sqlite"), run_id="phases",
                          judges=[], students=[])
    report = asyncio.run(author(config, generator_model=scripted([fenced(GOOD)]),
                                planner_model=scripted([plan_reply(["Highest level"])]), pool=pool,
                                on_activity=on_activity))
    assert len(report.accepted) == 1
    phases = list(dict.fromkeys(a.phase for a in activities))
    assert phases == ["profiling", "planning", "authoring", "reporting", "done"]
    calls: list[list[int]] = []  # the planner's calls: each streams from 0, growing, then the provider's count
    for a in activities:
        if a.phase == "planning" and a.tokens is not None:
            if a.tokens == 0:
                calls.append([])
            calls[-1].append(a.tokens)
    assert len(calls) == report.plan.usage.calls and all(len(c) > 10 and c[:-1] == sorted(c[:-1]) for c in calls)
    assert sum(c[-1] for c in calls) == report.plan.usage.output_tokens
    generating = [a for a in activities if a.slot == 0 and a.tokens]
    assert generating and generating[-1].tokens == report.slots[0].usage.output_tokens
    assert [a.stage for a in activities if a.stage] == ["auditing", "verifying"]  # the audit, then pass_through
