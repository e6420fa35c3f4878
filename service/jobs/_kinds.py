"""The job kinds: a registry from a kind's name to its request model and the function that runs it.

A kind's function takes its validated request and the `JobContext` and returns the job's result
(JSON). It must be safe to run again on the same job after a crash (a re-claimed job runs it
from the start): it resumes from its checkpoint and stores nothing twice.

The functions are named by "module:function" and imported when a job of their kind first runs:
the authoring job alone pulls in LangGraph, the model layer, pandas and SciPy, which the API's
and the worker's start-up, and a request that only queues a job, never need. The request models
are light (pydantic) and loaded with the table: the API validates requests and documents them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from itemsmith.registry import LazyTarget, Registry
from itemsmith.service.jobs._schemas import (
    AuditJobRequest,
    AuthorJobRequest,
    CalibrateJobRequest,
    EvaluateJobRequest,
    ExportJobRequest,
    ImportJobRequest,
    RecheckJobRequest,
    ReleaseJobRequest,
    ReverifyJobRequest,
    VerifyJobRequest,
)

if TYPE_CHECKING:
    from itemsmith.service.jobs._context import JobContext

__all__ = ["JOB_KINDS", "JobKindSpec"]

JobFunction = Callable[[Any, "JobContext"], dict[str, Any]]


@dataclass(frozen=True)
class JobKindSpec:
    """A kind: its request model, and its function or where to import it from."""

    name: str
    request_model: type[BaseModel]
    run: JobFunction | LazyTarget

    def function(self) -> JobFunction:
        """The kind's function, imported on the first call."""
        return self.run.load() if isinstance(self.run, LazyTarget) else self.run


JOB_KINDS: Registry[JobKindSpec] = Registry("job kind")
for _name, _model, _target in (
    ("author", AuthorJobRequest, "_author:run_author_job"),
    ("recheck", RecheckJobRequest, "_recheck:run_recheck_job"),
    ("reverify", ReverifyJobRequest, "_release_jobs:run_reverify_job"),
    ("evaluate", EvaluateJobRequest, "_release_jobs:run_evaluate_job"),
    ("calibrate", CalibrateJobRequest, "_calibrate:run_calibrate_job"),
    ("release", ReleaseJobRequest, "_publish:run_release_job"),
    ("export", ExportJobRequest, "_publish:run_export_job"),
    ("verify", VerifyJobRequest, "_publish:run_verify_job"),
    ("import", ImportJobRequest, "_static_items:run_import_job"),
    ("audit", AuditJobRequest, "_static_items:run_audit_job"),
):
    JOB_KINDS.add(_name, JobKindSpec(_name, _model, LazyTarget(f"itemsmith.service.jobs.{_target}")))
