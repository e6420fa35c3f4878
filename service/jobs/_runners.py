"""Where jobs run: threads of the API process (default) or Celery workers. Both run
`execute_job`; both recover jobs whose worker died (a periodic sweep re-queues running jobs with
an expired lease and re-dispatches jobs left queued)."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from sqlalchemy import Engine

from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._execute import execute_job, worker_name
from itemsmith.service.jobs._sweeper import JobSweeper
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.storage import get_engine

__all__ = ["CeleryRunner", "InProcessRunner", "JobRunner", "RUNNERS", "get_runner", "make_runner"]

log = logging.getLogger("itemsmith.jobs")


class JobRunner(Protocol):
    def dispatch(self, job_id: str) -> None:
        """Have the (committed, queued) job run soon; never raises for a job that cannot run now."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class InProcessRunner:
    """Jobs in a thread pool of this process (``itemsmith serve``: one command, SQLite). On start
    it takes over every job left queued or running by an earlier process (a crash or restart);
    on stop, running jobs are handed back to the queue and continue at the next start."""

    def __init__(self, engine: Engine, settings: ServiceSettings, *, max_jobs: int = 2) -> None:
        self.engine = engine
        self.settings = settings
        self.worker = worker_name("inprocess")
        self._executor = ThreadPoolExecutor(max_workers=max_jobs, thread_name_prefix="itemsmith-job")
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._running: dict[str, JobContext] = {}
        self._stopping = False
        self._sweeper = JobSweeper(engine, settings, self.dispatch)

    def dispatch(self, job_id: str) -> None:
        with self._lock:  # submitted under the lock: `stop` never shuts the pool down in between
            if self._stopping or job_id in self._pending:
                return
            self._pending.add(job_id)
            self._executor.submit(self._execute, job_id)

    def _started(self, context: JobContext) -> None:
        with self._lock:
            self._running[context.job_id] = context
            stopping = self._stopping
        if stopping:
            context.interrupt("shutdown")

    def _execute(self, job_id: str) -> None:
        outcome = None
        try:
            outcome = execute_job(self.engine, job_id, worker=self.worker, settings=self.settings,
                                  on_start=self._started)
        except Exception:  # e.g. the database went away; the sweep dispatches it again
            log.exception("job %s: the runner could not run it", job_id)
        finally:
            with self._lock:
                self._pending.discard(job_id)
                self._running.pop(job_id, None)
        if outcome == "queued":  # handed back after a transient database error (when stopping: refused)
            self.dispatch(job_id)

    def start(self) -> None:
        self._sweeper.start()

    def stop(self) -> None:
        """Hand running jobs back to the queue and wait for their threads to stop."""
        with self._lock:
            self._stopping = True
            running = list(self._running.values())
        for context in running:
            context.interrupt("shutdown")
        self._sweeper.stop()
        self._executor.shutdown(wait=True, cancel_futures=True)


class CeleryRunner:
    """Jobs on Celery workers (``itemsmith worker``) through Redis; the API only sends messages
    (the workers open the database themselves, so `engine` is not used here)."""

    def __init__(self, engine: Engine, settings: ServiceSettings) -> None:
        from itemsmith.service.jobs.celery_app import make_celery  # Celery is the optional `workers` extra

        self.app = make_celery(settings)

    def dispatch(self, job_id: str) -> None:
        from itemsmith.service.jobs.celery_app import RUN_JOB_TASK

        try:
            self.app.send_task(RUN_JOB_TASK, args=[job_id],
                               retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5})
        except Exception:  # the job stays queued; a worker's sweep dispatches it again
            log.warning("job %s: could not reach the broker; it stays queued", job_id, exc_info=True)

    def start(self) -> None:
        """Nothing to start: the workers sweep for jobs left behind."""

    def stop(self) -> None:
        self.app.close()


RUNNERS = {"inprocess": InProcessRunner, "celery": CeleryRunner}


def make_runner(settings: ServiceSettings, engine: Engine | None = None) -> JobRunner:
    """The runner the settings name (``ITEMSMITH_API_JOB_RUNNER``)."""
    return RUNNERS[settings.job_runner](engine or get_engine(settings.database_url), settings)


def get_runner(source: Any) -> JobRunner:
    """The app's runner (``app.state``, or a request's ``app.state``), or a new one for settings."""
    if isinstance(source, ServiceSettings):
        return make_runner(source)
    return source.job_runner
