"""Celery workers survive a broker restart. Two real ``itemsmith worker`` processes on a
private Redis server of this test (the shared one is never restarted) and a PostgreSQL database
of their own: Redis is killed and started again while a release job runs; the job finishes
once, both workers are still running, and the workers' beats (what ``/health`` counts) come back
to two."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import CeleryRunner, alive_workers, get_job, list_events, submit_job, upgrade_database
from itemsmith.templates_bank.curated import load_curated
from itemsmith.templates_bank.storage import BankCreate, create_bank, get_engine, import_curated, open_session

from ..support import wait_until

pytest.importorskip("celery")
pytestmark = pytest.mark.slow


def _tails(logs: Path) -> Callable[[], str]:
    """The end of every log in `logs`, read when a wait fails."""
    return lambda: "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(logs.iterdir()))


def _alive(redis_url: str) -> int | None:
    try:
        return alive_workers(redis_url, timeout_s=1)
    except Exception:  # noqa: BLE001 - the broker is away
        return None


def test_workers_survive_a_redis_restart_mid_job_and_the_job_finishes_once(
        private_redis, postgres_database: str, tmp_path: Path) -> None:
    upgrade_database(postgres_database)
    engine = get_engine(postgres_database)
    templates = [t.id for t in load_curated().values() if t.handler == "synthetic"][:6]
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="restart", handler="synthetic", owner="alice"))
        import_curated(session, bank.id, reviewer="curator", template_ids=templates)
    settings = ApiSettings(database_url=postgres_database, redis_url=private_redis.url, job_runner="celery",
                           uploads_dir=tmp_path / "uploads", job_lease_s=10)
    env = {**os.environ, "ITEMSMITH_DATABASE_URL": postgres_database, "ITEMSMITH_API_REDIS_URL": private_redis.url,
           "ITEMSMITH_API_JOB_LEASE_S": "10", "ITEMSMITH_API_UPLOADS_DIR": str(tmp_path / "uploads")}
    logs = tmp_path / "logs"
    logs.mkdir()
    workers = [subprocess.Popen([sys.executable, "-c", "from itemsmith.cli.app import app; app()", "worker", "-c", "1"],
                                env=env, stdout=(logs / f"worker-{i}.log").open("wb"), stderr=subprocess.STDOUT,
                                start_new_session=True) for i in range(2)]
    runner = CeleryRunner(engine, settings)
    try:
        wait_until(lambda: _alive(private_redis.url) == 2, "two workers' beats", 120, interval_s=0.2, details=_tails(logs))
        job = submit_job(engine, kind="release", owner="alice", bank_id=bank.id, runner=runner,
                         request={"bank_id": bank.id, "seeds": list(range(8)), "num_samples": 5, "created_by": "t"})

        def status() -> str:
            with open_session(engine) as session:
                return get_job(session, job.id).status

        wait_until(lambda: status() == "running", "the job to start", 120, interval_s=0.2, details=_tails(logs))
        private_redis.stop()
        assert _alive(private_redis.url) is None
        private_redis.start()  # empty: every key, beats included, is gone
        wait_until(lambda: status() == "succeeded", "the job to finish", 300, interval_s=0.2, details=_tails(logs))
        wait_until(lambda: _alive(private_redis.url) == 2, "both workers beating again", 120, interval_s=0.2,
                   details=_tails(logs))
        assert [w.poll() for w in workers] == [None, None]  # both still running
        with TestClient(create_app(settings)) as client:
            assert client.get("/health").json()["workers"] == {"runner": "celery", "alive": 2, "error": None}
    finally:
        runner.stop()
        for worker in workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
    with open_session(engine) as session:
        events = list_events(session, job.id)
    assert sum(e.kind == "release" for e in events) == 1
    assert [e.payload["status"] for e in events if e.kind == "status"].count("succeeded") == 1
    engine.dispose()

