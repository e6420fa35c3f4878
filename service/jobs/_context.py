"""What a running job sees: its claim, fenced writes (events, progress, stored results), and
whether it must stop (a cancel, the runner shutting down, or its lease lost)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from itemsmith.service.jobs._schemas import JobEventPublic
from itemsmith.service.jobs._store import Claim, LeaseLost, append_event, fenced_session, list_events, renew_lease
from itemsmith.service.jobs._transient import retry_transient
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.storage import open_session

__all__ = ["Heartbeat", "Interruption", "JobContext", "JobInterrupted"]

log = logging.getLogger("itemsmith.jobs")

Interruption = Literal["cancel", "shutdown", "lost"]


class JobInterrupted(Exception):
    """The job stopped early: cancelled by its owner, its runner shutting down (the job goes back
    to the queue), or its lease lost to another worker."""

    def __init__(self, reason: Interruption) -> None:
        super().__init__(f"job interrupted: {reason}")
        self.reason = reason


class JobContext:
    """One claimed run of a job. Thread-safe: the heartbeat thread and the job's own thread use it."""

    def __init__(self, engine: Engine, claim: Claim, settings: ServiceSettings) -> None:
        self.engine = engine
        self.claim = claim
        self.settings = settings
        self._lock = threading.Lock()
        self._interruption: Interruption | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def job_id(self) -> str:
        return self.claim.job_id

    @property
    def owner(self) -> str:
        return self.claim.owner

    @property
    def bank_id(self) -> int | None:
        return self.claim.bank_id

    @property
    def interruption(self) -> Interruption | None:
        return self._interruption

    def interrupt(self, reason: Interruption) -> None:
        """Ask the job to stop (the first reason wins); runs the `on_interrupt` callbacks once."""
        with self._lock:
            if self._interruption is not None:
                return
            self._interruption = reason
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    def on_interrupt(self, callback: Callable[[], None]) -> None:
        """Call `callback` (from any thread) when the job is interrupted; at once if it already is."""
        with self._lock:
            if self._interruption is None:
                self._callbacks.append(callback)
                return
        callback()

    def raise_if_interrupted(self) -> None:
        if self._interruption is not None:
            raise JobInterrupted(self._interruption)

    @contextmanager
    def fenced(self, **changes: Any) -> Iterator[Session]:
        """A transaction that commits only while this run holds the job (see `fenced_session`);
        notes a requested cancel. Raises `JobInterrupted("lost")` when the lease is gone."""
        try:
            with fenced_session(self.engine, self.claim, **changes) as (session, cancel):
                yield session
        except LeaseLost:
            self.interrupt("lost")
            raise JobInterrupted("lost") from None
        if cancel:
            self.interrupt("cancel")

    def publish(self, kind: str, payload: dict[str, Any], *, progress: dict[str, Any] | None = None) -> None:
        """Append an event (and replace the job's progress summary) in one fenced transaction,
        retried across a transient database error (a restart) for ``job_db_retry_s``."""
        changes = {} if progress is None else {"progress": progress}

        def write() -> None:
            with self.fenced(**changes) as session:
                append_event(session, self.job_id, kind, payload)

        retry_transient(write, within_s=self.settings.job_db_retry_s, what=f"job {self.job_id}: {kind} event")

    def progress(self, done_name: str, total_name: str, *, steps: int = 20) -> Callable[[int, int], None]:
        """An operation's ``on_progress(done, total)``: a ``progress`` event, and the job's progress
        summary ``{done_name: done, total_name: total}``, about every ``1/steps`` of the way and at the end."""

        def publish(done: int, total: int) -> None:
            if done == total or done % max(1, total // steps) == 0:
                counts = {done_name: done, total_name: total}
                self.publish("progress", counts, progress=counts)

        return publish

    def events(self, kind: str | None = None) -> list[JobEventPublic]:
        """Every event of the job so far (of every earlier run too)."""
        with open_session(self.engine) as session:
            return list_events(session, self.job_id, kind=kind)


class Heartbeat:
    """Renews the lease every `interval_s` in a thread while the job runs; interrupts the job when
    a cancel is requested or the lease was lost. A failed renewal (database briefly away) is
    retried at the next beat; the lease is long enough to survive a few."""

    def __init__(self, context: JobContext, interval_s: float) -> None:
        self.context = context
        self.interval_s = interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"itemsmith-heartbeat-{context.job_id[:8]}",
                                        daemon=True)

    def _beat(self) -> None:
        ctx = self.context
        while not self._done.wait(self.interval_s):
            try:
                cancel = renew_lease(ctx.engine, ctx.claim, ctx.settings.job_lease_s)
            except LeaseLost:
                ctx.interrupt("lost")
                return
            except Exception:  # keep beating; the next renewal may succeed
                log.warning("job %s: lease renewal failed", ctx.job_id, exc_info=True)
                continue
            if cancel:
                ctx.interrupt("cancel")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
