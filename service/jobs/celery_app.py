"""The Celery app of the workers (``itemsmith worker``; or ``celery -A itemsmith.service.jobs.celery_app worker``).

One task, ``itemsmith.run_job(job_id)``, runs `execute_job`: the job's state lives in the bank
database, the message only says "run this job". Messages are acknowledged late and put back
when a worker process is lost, one message is reserved at a time, and every worker sweeps the
database for jobs whose worker died (an expired lease) and dispatches them again, so a job
whose worker was killed resumes on another worker even when its message is gone. Claims are
atomic, so a duplicate message is harmless: the second claim fails and the task returns.
"""

from __future__ import annotations

import threading
from typing import Any

from celery import Celery
from celery.signals import worker_process_init, worker_ready, worker_shutdown, worker_shutting_down

from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._execute import execute_job, worker_name
from itemsmith.service.jobs._sweeper import JobSweeper
from itemsmith.service.jobs._worker_registry import WorkerBeat
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.storage import get_engine

__all__ = ["RUN_JOB_TASK", "app", "make_celery"]

RUN_JOB_TASK = "itemsmith.run_job"
_sweepers: list[JobSweeper] = []  # of this worker process
_beats: list[WorkerBeat] = []


class _RunningJobs:
    """The jobs this worker process runs (threads pool), to hand back when it is asked to stop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contexts: dict[str, JobContext] = {}

    def add(self, context: JobContext) -> None:
        with self._lock:
            self._contexts[context.job_id] = context

    def discard(self, job_id: str) -> None:
        with self._lock:
            self._contexts.pop(job_id, None)

    def interrupt_all(self) -> None:
        with self._lock:
            contexts = list(self._contexts.values())
        for context in contexts:
            context.interrupt("shutdown")


_running = _RunningJobs()


def make_celery(settings: ServiceSettings | None = None) -> Celery:
    """A Celery app on ``settings.redis_url`` with the job task."""
    settings = settings or ServiceSettings()
    celery = Celery("itemsmith", broker=settings.redis_url, set_as_current=False)
    celery.conf.update(
        task_acks_late=True,  # a message is done when its job run is, not when a worker takes it
        task_reject_on_worker_lost=True,  # a worker process that dies puts its message back
        # a task that raised is acknowledged: the job's outcome is in the database already, and a
        # job left running is found by the sweep, so redelivering the message would only repeat a failure
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,  # long jobs: reserve one message at a time
        task_ignore_result=True,
        task_default_queue="itemsmith",
        # a broker restart: reconnect for as long as it takes (the worker process is also
        # supervised, `service.jobs.supervisor`, in case the reconnect itself fails)
        broker_connection_retry_on_startup=True,
        broker_connection_retry=True,
        broker_connection_max_retries=None,
        broker_transport_options={"socket_keepalive": True, "health_check_interval": 10, "retry_on_timeout": True},
        worker_cancel_long_running_tasks_on_connection_loss=False,  # jobs hold leases of their own
        worker_hijack_root_logger=False,
    )
    celery.itemsmith_settings = settings  # type: ignore[attr-defined] - read by the worker's sweep

    @celery.task(name=RUN_JOB_TASK, acks_late=True, reject_on_worker_lost=True)
    def run_job(job_id: str) -> str | None:
        try:
            outcome = execute_job(get_engine(settings.database_url), job_id, worker=worker_name("celery"),
                                  settings=settings, on_start=_running.add)
        finally:
            _running.discard(job_id)
        if outcome == "queued":  # handed back (a shutdown, a transient database error): a worker takes it from here
            celery.send_task(RUN_JOB_TASK, args=[job_id])
        return outcome

    return celery


@worker_ready.connect
def _start_sweep(sender: Any = None, **_: Any) -> None:
    celery = sender.app
    settings: ServiceSettings = celery.itemsmith_settings
    sweeper = JobSweeper(get_engine(settings.database_url), settings,
                         lambda job_id: celery.send_task(RUN_JOB_TASK, args=[job_id]),
                         first_queued_for_s=settings.job_lease_s)
    _sweepers.append(sweeper)
    sweeper.start()
    beat = WorkerBeat(settings.redis_url, worker_name("celery"))
    _beats.append(beat)
    beat.start()


@worker_process_init.connect
def _forget_inherited_connections(**_: Any) -> None:
    """A prefork child must not share the parent's pooled database connections."""
    get_engine(ServiceSettings().database_url).dispose(close=False)


@worker_shutting_down.connect
def _hand_back_jobs(**_: Any) -> None:
    """A warm shutdown (SIGTERM) stops running jobs at their next step and queues them again,
    instead of holding the shutdown until they end."""
    _running.interrupt_all()


@worker_shutdown.connect
def _stop_sweep(sender: Any = None, **_: Any) -> None:
    for sweeper in _sweepers:
        sweeper.stop()
    _sweepers.clear()
    for beat in _beats:
        beat.stop()
    _beats.clear()


app = make_celery()
