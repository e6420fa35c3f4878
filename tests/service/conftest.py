"""Fixtures of the service tests: a PostgreSQL server and a Redis server of a test's own, on free
loopback ports in a temporary folder, that the test may stop and start at will (the machine's
shared servers are never restarted: other tests use them); scripted models of an authoring job.
benchmarks/database_restart_jobs.py uses them too."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from itemsmith.agents.authoring.taxonomy import coverage_plan
from itemsmith.templates_bank.curated import get_curated

from ..support import wait_until

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None) if Path("/usr/lib/postgresql").exists() \
    else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_postgres(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", "postgres", "--", *command], check=True, capture_output=True, text=True,
                          timeout=120)


class PrivatePostgres:
    """initdb + pg_ctl as the postgres user; `stop()` / `start()` restart it under a running test."""

    def __init__(self) -> None:
        if PG_BIN is None or shutil.which("runuser") is None:
            pytest.skip("no PostgreSQL binaries (or runuser) to start a private server")
        self.folder = Path(tempfile.mkdtemp(prefix="itemsmith-pg-"))
        shutil.chown(self.folder, "postgres", "postgres")
        self.data = self.folder / "data"
        self.port = free_port()
        _as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.start()

    def start(self) -> None:
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-o",
                     f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1", "start")

    def stop(self) -> None:
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def close(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # stopped already
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """redis-server on a free port, no persistence; `stop()` kills it, `start()` starts it again."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.skip("no redis-server to start a private one")
        self.folder = Path(tempfile.mkdtemp(prefix="itemsmith-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                         "--save", "", "--appendonly", "no", "--dir", str(self.folder)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self._pong, "redis-server to answer PING", 30, interval_s=0.05)

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(30)
            self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


AUTHOR_TASK = "questions about synthetic series"
AUTHOR_TITLES = {"First": "feat_trend_classify", "Second": "feat_extreme_date", "Third": "exam_base_pattern"}


def write_author_scripts(folder: Path, *, latency_s: float) -> dict[str, str]:
    """The planner and generator of an authoring job, scripted into `folder`: three briefs, a
    curated template for each (`AUTHOR_TITLES`), every generator call `latency_s` long (so that
    a restart lands while the slots run). Returns their model specs by role."""
    categories = coverage_plan(len(AUTHOR_TITLES), task=AUTHOR_TASK)  # the slots' on the two-channel handler
    plan = [{"title": t, "category": category, "concept": "arithmetic", "kind": "mc",
             "question": f"{t}: what is asked about <record>?", "answer_from": "the series", "columns": []}
            for t, category in zip(AUTHOR_TITLES, categories, strict=True)]
    rules = [{"match": f"Title: {title}\\b", "replies": [f"```python\n{get_curated(key).source}```\n"]}
             for title, key in AUTHOR_TITLES.items()]
    (folder / "planner.json").write_text(json.dumps({"replies": [json.dumps(plan)]}))
    (folder / "generator.json").write_text(json.dumps({"latency_s": latency_s, "rules": rules}))
    return {"planner": f"scripted:{folder / 'planner.json'}", "generator": f"scripted:{folder / 'generator.json'}"}


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    try:
        yield server
    finally:
        server.close()
