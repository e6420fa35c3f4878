"""The kill test: a real Redis and real ``itemsmith worker`` processes on PostgreSQL. A worker is
SIGKILLed in the middle of a scripted authoring job; another worker started afterwards finishes
it, and the bank holds exactly the templates of an uninterrupted run, each stored once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import CeleryRunner, JobPublic, execute_job, get_job, list_events, submit_job
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    get_engine,
    list_verdicts,
    list_versions,
    open_session,
)

from ..support import wait_until
from .conftest import OWNER, AuthorScripts, RecordingRunner

redis = pytest.importorskip("redis")
pytest.importorskip("celery")

pytestmark = pytest.mark.slow

REDIS_URL = os.environ.get("ITEMSMITH_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")  # a database of its own
LEASE_S = 3.0


@pytest.fixture
def redis_url() -> Iterator[str]:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {REDIS_URL} is required under CI: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    client.flushdb()
    yield REDIS_URL
    client.flushdb()
    client.close()


class Workers:
    """``itemsmith worker`` processes, each in its own process group (killed with its children)."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        log = (self.logs / f"worker-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen([sys.executable, "-c", "from itemsmith.cli.app import app; app()", "worker", "-c", "1"],
                                   env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.kill(process)

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.logs.iterdir()))


def test_scripted_job_survives_a_killed_celery_worker(migrated_postgres_url: str, redis_url: str, tmp_path: Path,
                                                      author_scripts) -> None:
    engine = get_engine(migrated_postgres_url)
    settings = ApiSettings(database_url=migrated_postgres_url, redis_url=redis_url, job_runner="celery",
                           uploads_dir=tmp_path / "uploads", job_lease_s=LEASE_S)
    with open_session(engine) as session:
        reference = create_bank(session, BankCreate(name="uninterrupted", handler="synthetic", owner=OWNER))
        bank = create_bank(session, BankCreate(name="killed", handler="synthetic", owner=OWNER))

    def job(job_id: str) -> JobPublic:
        with open_session(engine) as session:
            return get_job(session, job_id)

    def stored(bank_id: int) -> list[tuple[str, list[str]]]:
        with open_session(engine) as session:
            return sorted((v.content_hash, sorted(x.stage for x in list_verdicts(session, v.id)))
                          for v in list_versions(session, bank_id))

    # the job on Celery, its generator slowed down so that the kill lands mid-job
    titles = ("First", "Second", "Third")
    slow: AuthorScripts = author_scripts(titles, latency_s=1.0)
    fast: AuthorScripts = author_scripts(titles)
    env = {**os.environ, "ITEMSMITH_DATABASE_URL": migrated_postgres_url, "ITEMSMITH_API_REDIS_URL": redis_url,
           "ITEMSMITH_API_JOB_LEASE_S": str(LEASE_S), "ITEMSMITH_API_UPLOADS_DIR": str(tmp_path / "uploads")}
    logs = tmp_path / "logs"
    logs.mkdir()
    workers = Workers(env, logs)
    runner = CeleryRunner(engine, settings)
    try:
        first = workers.start()
        killed = submit_job(engine, kind="author", owner=OWNER, request=slow.request(bank.id), bank_id=bank.id,
                            runner=runner)
        wait_until(lambda: job(killed.id).progress.get("accepted", 0) >= 1, "the first accepted template", 150,
                   interval_s=0.2, details=workers.output)
        workers.kill(first)
        at_kill = job(killed.id)
        assert at_kill.status == "running" and at_kill.progress["accepted"] < 3, at_kill.progress

        workers.start()
        # meanwhile, the uninterrupted run: the same job code in this process, without the delay
        uninterrupted = submit_job(engine, kind="author", owner=OWNER, request=fast.request(reference.id),
                                   bank_id=reference.id, runner=RecordingRunner())
        reference_settings = settings.model_copy(update={"job_lease_s": 120.0})  # not a job for the sweep
        assert execute_job(engine, uninterrupted.id, worker="reference", settings=reference_settings) == "succeeded"
        wait_until(lambda: job(killed.id).status not in ("queued", "running"), "the job to end", 150, interval_s=0.2,
                   details=workers.output)
    finally:
        workers.stop_all()
        runner.stop()
    expected = stored(reference.id)
    assert len(expected) == 3 and all(stages == ["audit", "decision", "structure"] for _, stages in expected)
    finished = job(killed.id)
    assert finished.status == "succeeded", f"{finished.error}\n{workers.output()}"
    assert finished.attempts >= 2 and finished.progress["accepted"] == 3
    assert stored(bank.id) == expected  # the same templates, each once, with one set of verdicts
    with open_session(engine) as session:
        events = list_events(session, killed.id)
    assert {"status": "queued", "reason": "its worker stopped"} in [e.payload for e in events]
    assert sum(e.kind == "template" for e in events) == 3
