"""Database errors that pass (a PostgreSQL restart, a dropped connection, SQLite busy for a
moment) are retried rather than failing a job: `retry_transient` retries a unit of work that is
safe to repeat (one transaction) with backoff until `ServiceSettings.job_db_retry_s` runs out.
A job whose own code meets one anyway goes back to the queue (`_execute`) and is claimed again
by a runner or the sweeper, up to ``job_transient_attempts`` claims.
The attempts run through tenacity, as a model call's do (`agents.llm.inference`); the policies
differ (a deadline here; a count of attempts, a bound on all waits and the provider's Retry-After
there), and importing that module would load LangChain into the worker's start-up.

Such an error comes wrapped by SQLAlchemy (the bank and the job store) or straight from psycopg
(LangGraph's PostgreSQL checkpointer speaks to the server without SQLAlchemy): a restart shows up
as ``AdminShutdown``, "server closed the connection unexpectedly", "consuming input failed",
"the database system is shutting down" or "... is starting up", all psycopg ``OperationalError``.
An error raised while one of them was being handled (``raise ... from``, or an error of the
clean-up after it) counts too: the job failed because the database went away."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_delay, wait_exponential

try:  # the `postgres` extra
    from psycopg import OperationalError as PsycopgOperationalError
except ImportError:  # pragma: no cover - without it, no PostgreSQL and none of its errors
    PsycopgOperationalError = OperationalError  # type: ignore[misc,assignment]

__all__ = ["is_transient", "retry_transient"]

log = logging.getLogger("itemsmith.jobs")

T = TypeVar("T")


def _is_database_away(exc: BaseException) -> bool:
    if isinstance(exc, OperationalError | InterfaceError | PsycopgOperationalError):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


def is_transient(exc: BaseException) -> bool:
    """A lost or refused connection, a server shutting down, a busy database: not the job's fault.
    Looks through the errors `exc` was raised from or while handling, and into exception groups."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if _is_database_away(current):
            return True
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            pending += current.exceptions
    return False


def retry_transient(work: Callable[[], T], *, within_s: float, what: str, first_wait_s: float = 0.2,
                    max_wait_s: float = 5.0) -> T:
    """`work()`, again after each transient error until `within_s` seconds have passed (then the
    last error is raised). `work` must be one transaction: an attempt that failed committed nothing.
    The waits double from `first_wait_s` up to `max_wait_s`; the last one ends at `within_s`."""
    backoff = wait_exponential(multiplier=first_wait_s, max=max_wait_s)

    def wait(state: RetryCallState) -> float:
        return max(0.0, min(backoff(state), within_s - (state.seconds_since_start or 0.0)))

    def told(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning("%s: transient database error (%s: %s); again in %.1f s", what, type(exc).__name__,
                    str(exc).splitlines()[0] if str(exc) else "", state.upcoming_sleep)

    retrying = Retrying(retry=retry_if_exception(is_transient), wait=wait, stop=stop_after_delay(within_s),
                        before_sleep=told, reraise=True)
    return retrying(work)
