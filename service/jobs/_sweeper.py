"""The job sweep both runners share: a daemon thread that re-queues and re-dispatches jobs whose
worker died (an expired lease) or whose dispatch was lost."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import Engine

from itemsmith.service.jobs._store import requeue_stale_jobs
from itemsmith.service.settings import ServiceSettings

__all__ = ["JobSweeper"]

log = logging.getLogger("itemsmith.jobs")


class JobSweeper:
    """A daemon thread that, every `interval_s`, re-queues and re-dispatches jobs no live worker
    holds (`requeue_stale_jobs`); the first sweep, at start, takes every queued job."""

    def __init__(self, engine: Engine, settings: ServiceSettings, dispatch: Callable[[str], None], *,
                 first_queued_for_s: float = 0.0) -> None:
        self.engine = engine
        self.lease_s = settings.job_lease_s
        self.dispatch = dispatch
        self.first_queued_for_s = first_queued_for_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="itemsmith-job-sweeper", daemon=True)

    def sweep(self, queued_for_s: float) -> list[str]:
        job_ids = requeue_stale_jobs(self.engine, queued_for_s=queued_for_s)
        for job_id in job_ids:
            log.info("job %s: dispatched again (its worker stopped or its dispatch was lost)", job_id)
            self.dispatch(job_id)
        return job_ids

    def _loop(self) -> None:
        queued_for_s = self.first_queued_for_s
        while True:
            try:
                self.sweep(queued_for_s)
            except Exception:  # the database may be away for a moment; sweep again later
                log.warning("job sweep failed", exc_info=True)
            queued_for_s = self.lease_s
            if self._done.wait(max(1.0, self.lease_s / 2)):
                return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
