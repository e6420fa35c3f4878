"""`itemsmith serve` (the REST API and review page) and `itemsmith worker` (a Celery job worker).

Both use the one database setting of every command: ``--db``, else ``ITEMSMITH_DATABASE_URL``,
else the SQLite file in ``ITEMSMITH_DATA_DIR``.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from itemsmith.cli._common import DbOpt, fail, usage_error
from itemsmith.cli._interrupt import own_signal_handling

__all__ = ["serve", "worker"]

WORKER_POOLS = ("threads", "prefork", "solo")


def _require_sandbox_layers() -> None:
    """The service and its job workers never run templates with fewer isolation layers than
    ITEMSMITH_SANDBOX_REQUIRED_LAYERS (default: all): refuse to start, saying which are missing."""
    from itemsmith.sandbox import IsolationUnavailable, SandboxError, check_isolation

    try:
        report = check_isolation()
    except (IsolationUnavailable, SandboxError) as exc:
        raise fail(f"{exc}; see docs/operator.md, 'Sandbox layers'") from None
    typer.echo(report.summary(), err=True)


def serve(host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
          db: DbOpt = None) -> None:
    """Run the REST API and review page (migrating the database first); jobs run in this process
    unless ITEMSMITH_API_JOB_RUNNER=celery."""
    import uvicorn

    from itemsmith.api.access_log import log_config
    from itemsmith.api.app import create_app
    from itemsmith.api.settings import ApiSettings
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.storage import current_revision

    settings = ApiSettings(database_url=db) if db is not None else ApiSettings()
    _require_sandbox_layers()
    upgrade_database(settings.database_url)
    typer.echo(f"database at revision {current_revision(settings.database_url)}; serving on http://{host}:{port}",
               err=True)
    with own_signal_handling():  # uvicorn's graceful shutdown on Ctrl-C
        uvicorn.run(create_app(settings), host=host, port=port, log_config=log_config())


def worker(
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, max=64,
                                             help="Jobs this worker runs at once.")] = 2,
    pool: Annotated[str, typer.Option("--pool", help="Celery execution pool: threads, prefork or solo.")] = "threads",
    loglevel: Annotated[str, typer.Option("--loglevel", help="Log level: DEBUG, INFO, WARNING, ERROR.")] = "INFO",
    db: DbOpt = None,
) -> None:
    """Run a Celery worker for jobs (broker ITEMSMITH_API_REDIS_URL). The API sends jobs here when
    ITEMSMITH_API_JOB_RUNNER=celery. Start as many as you like; a job whose worker is killed is
    resumed by another one once its lease (ITEMSMITH_API_JOB_LEASE_S) expires. The Celery worker
    runs in a child process, started again if it exits on its own (a broker restart)."""
    if pool not in WORKER_POOLS:
        raise usage_error(f"--pool {pool!r}: use {', '.join(WORKER_POOLS)}")
    import sys

    from itemsmith.templates_bank.storage import StorageError, require_current_schema

    try:
        from itemsmith.service.jobs.celery_app import app as celery_app  # noqa: F401 - fail here, not in the child
        from itemsmith.service.jobs.supervisor import supervise
    except ImportError as exc:
        raise fail(f"workers need Celery ({exc.name} is missing): pip install 'itemsmith[workers]'") from None
    try:
        require_current_schema(db)
    except StorageError as exc:
        raise fail(str(exc)) from None
    _require_sandbox_layers()
    # the Celery worker is its own process: it reads its settings from its environment
    env = {**os.environ, "ITEMSMITH_DATABASE_URL": db} if db is not None else None
    with own_signal_handling():  # the supervisor passes Ctrl-C on to Celery's warm shutdown
        code = supervise([
            sys.executable, "-m", "celery", "-A", "itemsmith.service.jobs.celery_app", "worker",
            f"--concurrency={concurrency}", f"--pool={pool}", f"--loglevel={loglevel}",
            f"--hostname=itemsmith-{os.getpid()}@%h", "--without-gossip", "--without-mingle"], env=env)
    raise typer.Exit(code)
