"""A job runner for benchmarks that run the service's jobs themselves: `QueuedRunner` leaves every
dispatched job queued, so a benchmark runs the job (`execute_job`) where and when it times it.
Imported by benchmarks/import_speed.py and benchmarks/tse_import.py; it measures nothing itself."""

from __future__ import annotations

__all__ = ["QueuedRunner"]


class QueuedRunner:
    """`service.jobs.JobRunner` that runs nothing: jobs stay queued for the caller to run."""

    def dispatch(self, job_id: str) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass
