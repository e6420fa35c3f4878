"""Database errors that pass (a PostgreSQL restart, a dropped connection, SQLite busy for a
moment) are retried rather than failing a job: `retry_transient` retries a unit of work that is
safe to repeat (one transaction) with backoff until `ServiceSettings.job_db_retry_s` runs out.
A job whose own code meets one anyway goes back to the queue (`_execute`) and is claimed again
by a runner or the sweeper, up to ``job_transient_attempts`` claims."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

__all__ = ["is_transient", "retry_transient"]

log = logging.getLogger("itemsmith.jobs")

T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """A lost or refused connection, a server shutting down, a busy database: not the job's fault."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


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
