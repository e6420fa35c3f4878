"""Database errors that pass (a PostgreSQL restart, a dropped connection, SQLite busy for a
moment) are retried rather than failing a job: `retry_transient` retries a unit of work that is
safe to repeat (one transaction) with backoff until `ServiceSettings.job_db_retry_s` runs out.
A job whose own code meets one anyway goes back to the queue (`_execute`) and is claimed again
by a runner or the sweeper, up to ``job_transient_attempts`` claims.

Such an error comes wrapped by SQLAlchemy (the bank and the job store) or straight from psycopg
(LangGraph's PostgreSQL checkpointer speaks to the server without SQLAlchemy): a restart shows up
as ``AdminShutdown``, "server closed the connection unexpectedly", "consuming input failed",
"the database system is shutting down" or "... is starting up", all psycopg ``OperationalError``.
An error raised while one of them was being handled (``raise ... from``, or an error of the
clean-up after it) counts too: the job failed because the database went away."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

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
    last error is raised). `work` must be one transaction: an attempt that failed committed nothing."""
    deadline = time.monotonic() + within_s
    wait = first_wait_s
    while True:
        try:
            return work()
        except Exception as exc:
            left = deadline - time.monotonic()
            if not is_transient(exc) or left <= 0:
                raise
            log.warning("%s: transient database error (%s: %s); again in %.1f s", what, type(exc).__name__,
                        str(exc).splitlines()[0] if str(exc) else "", min(wait, left))
            time.sleep(min(wait, left))
            wait = min(wait * 2, max_wait_s)
