"""Starting and stopping the app's job runner with the app (a FastAPI lifespan)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

__all__ = ["jobs_lifespan"]


@asynccontextmanager
async def jobs_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start ``app.state.job_runner`` (the in-process runner takes over jobs left by an earlier
    process); on shutdown, running jobs go back to the queue."""
    runner = app.state.job_runner
    runner.start()
    try:
        yield
    finally:
        await run_in_threadpool(runner.stop)
