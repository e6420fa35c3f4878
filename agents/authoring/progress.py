"""The live progress of an authoring run (rich): what the run does now, and a table of its slots.

`ProgressTable` takes the run's `SlotEvent`s (call it) and `Activity`s (`activity`): the run's
phase (profiling, planning, authoring, reporting), the output tokens a model call in flight has
streamed so far, the verification stage a slot is in. It is a rich renderable (`__rich__`), so a
`Live` display redraws it on its own refresh: the clock and the token counts tick between events.
Without a live display (`live=False`: ``--no-live``, or stderr is not a terminal) it prints the
same as lines: each change of phase, each slot's finish, and while the run works a status line
(elapsed, phase, tokens, ETA) every `interval_s`, from a background thread.

ETA: from the mean time a slot took from its first step to its end in this session. A running
slot has that mean less its time so far left (at least 0); queued slots follow in waves as wide
as the slots running now. None until a slot has finished in this session.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from itemsmith.agents.authoring.context import Activity, RunPhase, SlotEvent

_STYLE = {"accepted": "green", "discarded": "red", "failed": "bold red", "errored": "bold red", "checking": "cyan", "verifying": "cyan",
          "generating": "yellow", "refining": "yellow", "queued": "dim"}
_FINAL = ("accepted", "discarded", "errored", "failed")
_RUN_PHASE_TEXT: dict[RunPhase, str] = {
    "profiling": "profiling the handler", "planning": "planning", "authoring": "authoring",
    "reporting": "writing the report", "done": "done", "finished earlier": "finished earlier: its stored report"}


@dataclass
class _Call:
    """A model call in flight: its output tokens so far and since when it writes them (or, while it
    still reads its prompt, how many prompt tokens and since when)."""

    round: int
    tokens: int
    started: float
    reading: int | None = None


@dataclass(frozen=True)
class Status:
    """What a status line says."""

    elapsed_s: float
    phase: str
    slots: int
    done: int
    accepted: int
    input_tokens: int
    output_tokens: int
    streaming_tokens: int  # output tokens of the calls in flight (not yet in the slots' totals)
    eta_s: float | None

    def line(self) -> str:
        eta = "?" if self.eta_s is None else _duration(self.eta_s)
        return (f"[{_duration(self.elapsed_s)}] {self.phase} | {self.done}/{self.slots} done, {self.accepted} "
                f"accepted | tokens in/out {self.input_tokens}/{self.output_tokens + self.streaming_tokens} | "
                f"ETA {eta}")


class ProgressTable:
    """Collects `SlotEvent`s and `Activity`s and shows them; use as a context manager around the run.

    `clock` (seconds, monotonic) and `interval_s` (the status line's period without a live display)
    are for tests.
    """

    def __init__(self, *, max_rounds: int, console: Console | None = None, live: bool = True,
                 clock: Callable[[], float] = time.monotonic, interval_s: float = 30.0) -> None:
        self.max_rounds = max_rounds
        self.console = console or Console(stderr=True)
        self.clock = clock
        self.interval_s = interval_s
        self.started = clock()
        self.events: dict[int, SlotEvent] = {}
        self.run_phase: RunPhase | None = None
        self._calls: dict[int | None, _Call] = {}  # by slot; None: the planner
        self._stages: dict[int, str] = {}  # a verifying slot's stage
        self._authoring_since: float | None = None
        self._slot_started: dict[int, float] = {}  # when a slot took its first step in this session
        self._slot_times: list[float] = []  # first step to end, of the slots finished in this session
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._live = Live(self, console=self.console, refresh_per_second=4, transient=False) if live else None

    def __call__(self, event: SlotEvent) -> None:
        with self._lock:
            previous = self.events.get(event.slot)
            self.events[event.slot] = event
            if event.phase not in ("generating", "refining"):
                self._calls.pop(event.slot, None)
            if event.phase != "verifying":
                self._stages.pop(event.slot, None)
            if self._authoring_since is not None:
                now = self.clock()
                if event.phase in _FINAL and (previous is None or previous.phase not in _FINAL):
                    self._slot_times.append(now - self._slot_started.get(event.slot, self._authoring_since))
                if event.phase != "queued":
                    self._slot_started.setdefault(event.slot, now)
            changed = previous is None or (previous.phase, previous.round) != (event.phase, event.round)
        if self._live is None and changed:
            if event.phase in _FINAL:
                self._print(f"slot {event.slot} {event.phase} after {event.round} round(s): {event.title}")
            elif event.phase != "queued":
                self._print(f"slot {event.slot} round {event.round}: {event.phase}")

    def activity(self, activity: Activity) -> None:
        """A run phase, a streamed token count or a verification stage."""
        now = self.clock()
        with self._lock:
            phase_changed = activity.phase != self.run_phase
            self.run_phase = activity.phase
            if activity.phase == "authoring" and self._authoring_since is None:
                self._authoring_since = now
            if activity.phase != "planning":
                self._calls.pop(None, None)  # the planner's call is over
            stage_changed = False
            if activity.tokens is not None:
                call = self._calls.get(activity.slot)
                if call is not None and call.reading is not None and activity.prompt_tokens is None:
                    call.reading, call.started = None, now  # the prompt is read: the first token
                elif call is None or call.round != activity.round or activity.tokens == 0:  # a call starts at 0
                    call = self._calls[activity.slot] = _Call(round=activity.round, tokens=0, started=now,
                                                              reading=activity.prompt_tokens)
                call.tokens = activity.tokens
            if activity.stage is not None and activity.slot is not None:
                stage_changed = self._stages.get(activity.slot) != activity.stage
                self._stages[activity.slot] = activity.stage
        if self._live is None:
            if phase_changed:
                self._print(_RUN_PHASE_TEXT[activity.phase])
            elif stage_changed and activity.stage != "verifying":  # a stage without a label says nothing new
                self._print(f"slot {activity.slot} round {activity.round}: {activity.stage}")

    def phase(self) -> str:
        """What the run does now, e.g. ``generating slot 2 round 1: 812 tokens (14 tok/s)``."""
        now = self.clock()
        with self._lock:
            if self.run_phase == "planning":
                call = self._calls.get(None)
                return "planning" + (f": {_tokens(call, now)}" if call is not None else "")
            if self.run_phase != "authoring":
                return _RUN_PHASE_TEXT[self.run_phase] if self.run_phase is not None else "starting"
            busy = []
            for slot, event in sorted(self.events.items()):
                if event.phase in (*_FINAL, "queued"):
                    continue
                text = f"{event.phase} slot {slot} round {event.round}"
                call = self._calls.get(slot)
                if event.phase in ("generating", "refining") and call is not None:
                    text += f": {_tokens(call, now)}"
                elif event.phase == "verifying" and self._stages.get(slot, "verifying") != "verifying":
                    text += f": {self._stages[slot]}"
                busy.append(text)
            return "; ".join(busy) or "authoring"

    def status(self) -> Status:
        now = self.clock()
        with self._lock:
            events = list(self.events.values())
            streaming = sum(call.tokens for call in self._calls.values())
            done = sum(e.phase in _FINAL for e in events)
            eta = None
            if self._slot_times:
                per_slot = sum(self._slot_times) / len(self._slot_times)
                running = [now - self._slot_started[e.slot] for e in events
                           if e.phase not in _FINAL and e.slot in self._slot_started]
                queued = sum(e.phase not in _FINAL and e.slot not in self._slot_started for e in events)
                eta = (max((max(per_slot - ran, 0.0) for ran in running), default=0.0)
                       + math.ceil(queued / max(len(running), 1)) * per_slot)
        return Status(elapsed_s=now - self.started, phase=self.phase(), slots=len(events), done=done,
                      accepted=sum(e.phase == "accepted" for e in events),
                      input_tokens=sum(e.input_tokens for e in events),
                      output_tokens=sum(e.output_tokens for e in events), streaming_tokens=streaming, eta_s=eta)

    def render(self) -> Group:
        status = self.status()
        with self._lock:
            events = [self.events[k] for k in sorted(self.events)]
            calls = dict(self._calls)
        table = Table(title=f"itemsmith author  ({_duration(status.elapsed_s)})", expand=False)
        for column in ("slot", "template", "state", "round", "tokens in/out", "cost $"):
            table.add_column(column)
        for e in events:
            cost = "?" if e.cost_usd is None else f"{e.cost_usd:.4f}"
            call = calls.get(e.slot)
            streaming = f" +{call.tokens}" if call is not None and e.phase in ("generating", "refining") else ""
            table.add_row(str(e.slot), e.title[:48], f"[{_STYLE.get(e.phase, '')}]{e.phase}[/]",
                          f"{e.round}/{self.max_rounds}", f"{e.input_tokens}/{e.output_tokens}{streaming}", cost)
        eta = "" if status.eta_s is None else f", ETA {_duration(status.eta_s)}"
        table.caption = f"{status.done}/{status.slots} done, {status.accepted} accepted{eta}"
        return Group(Text(status.phase, style="bold"), table)

    def __rich__(self) -> Group:
        return self.render()

    def tick(self) -> None:
        """Print the status line while the run works (the ticker's step, without a live display)."""
        if self.run_phase not in (None, "done", "finished earlier"):
            self.console.print(self.status().line(), markup=False, highlight=False, soft_wrap=True)

    def _tick_until_stopped(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.tick()

    def _print(self, text: str) -> None:
        self.console.print(f"[{_duration(self.clock() - self.started)}] {text}", markup=False, highlight=False,
                           soft_wrap=True)

    def __enter__(self) -> ProgressTable:
        if self._live is not None:
            self._live.__enter__()
        else:
            self._ticker = threading.Thread(target=self._tick_until_stopped, name="itemsmith-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(*exc)
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()


def _tokens(call: _Call, now: float) -> str:
    elapsed = now - call.started
    if call.reading is not None:
        return f"reading the prompt, {call.reading} tokens ({_duration(elapsed)})"
    rate = f" ({call.tokens / elapsed:.0f} tok/s)" if elapsed >= 1 and call.tokens else ""
    return f"{call.tokens} tokens{rate}"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
