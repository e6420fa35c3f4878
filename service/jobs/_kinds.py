"""The job kinds: a registry from a kind's name to its request model and the function that runs it.

A kind's function takes its validated request and the `JobContext` and returns the job's result
(JSON). It must be safe to run again on the same job after a crash (a re-claimed job runs it
from the start): it resumes from its checkpoint and stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from itemsmith.registry import Registry

if TYPE_CHECKING:
    from itemsmith.service.jobs._context import JobContext

__all__ = ["JOB_KINDS", "JobKindSpec", "job_kind"]

JobFunction = Callable[[Any, "JobContext"], dict[str, Any]]


@dataclass(frozen=True)
class JobKindSpec:
    name: str
    request_model: type[BaseModel]
    run: JobFunction


JOB_KINDS: Registry[JobKindSpec] = Registry("job kind")


def job_kind(name: str, request_model: type[BaseModel]) -> Callable[[JobFunction], JobFunction]:
    """Register the decorated function as the runner of job kind `name`."""
    return JOB_KINDS.register(name, lambda run: JobKindSpec(name, request_model, run))
