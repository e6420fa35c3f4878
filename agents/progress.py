"""A live progress table of an authoring run (rich): per-slot phase, round, tokens and cost."""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from itemsmith.agents.context import SlotEvent

_STYLE = {"accepted": "green", "discarded": "red", "failed": "bold red", "checking": "cyan", "verifying": "cyan",
          "generating": "yellow", "refining": "yellow", "queued": "dim"}


class ProgressTable:
    """Collects `SlotEvent`s and renders them; use as a context manager around the run."""

    def __init__(self, *, max_rounds: int, console: Console | None = None, live: bool = True) -> None:
        self.max_rounds = max_rounds
        self.console = console or Console(stderr=True)
        self.events: dict[int, SlotEvent] = {}
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._live = Live(self.render(), console=self.console, refresh_per_second=4, transient=False) if live else None

    def __call__(self, event: SlotEvent) -> None:
        with self._lock:
            self.events[event.slot] = event
        if self._live is not None:
            self._live.update(self.render())
        elif event.phase in ("accepted", "discarded", "failed"):
            self.console.print(f"slot {event.slot} {event.phase} after {event.round} round(s): {event.title}")

    def render(self) -> Table:
        with self._lock:
            events = [self.events[k] for k in sorted(self.events)]
        table = Table(title=f"itemsmith author  ({time.monotonic() - self.started:.0f} s)", expand=False)
        for column in ("slot", "template", "state", "round", "tokens in/out", "cost $"):
            table.add_column(column)
        for e in events:
            cost = "?" if e.cost_usd is None else f"{e.cost_usd:.4f}"
            table.add_row(str(e.slot), e.title[:48], f"[{_STYLE.get(e.phase, '')}]{e.phase}[/]",
                          f"{e.round}/{self.max_rounds}", f"{e.input_tokens}/{e.output_tokens}", cost)
        done = sum(e.phase in ("accepted", "discarded", "failed") for e in events)
        accepted = sum(e.phase == "accepted" for e in events)
        table.caption = f"{done}/{len(events)} done, {accepted} accepted"
        return table

    def __enter__(self) -> ProgressTable:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.__exit__(*exc)
