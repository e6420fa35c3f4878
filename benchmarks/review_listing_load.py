"""Load test of the review listing on PostgreSQL: requests/s, p50/p99 latency, and throughput as
a ratio of ``/health``'s in the same run (the listing should not depend on the bank's size).

    python benchmarks/review_listing_load.py [--admin-url postgresql://postgres@127.0.0.1:5432/postgres]
        [--templates 10000 100000] [--server-workers 2] [--duration 10] [--connections 8] [--threads 2]
        [--tool auto|wrk|httpx] [--json FILE]

For each size in ``--templates``:

1. Creates a fresh database (dropped at the end, even on failure) and migrates it to 0002.
2. Bulk-loads (PostgreSQL COPY) one bank of that many template versions (a tenth of them
   second versions of an earlier template) with verdicts shaped like a real run: a structure
   report each; two judges x five criteria for those that ran; a pipeline decision (declined
   at structure, judges or capability, else accepted with IRT parameters); and some reviews.
3. Migrates to the newest revision: 0003 backfills the per-version summaries (timed).
4. Serves the app with ``uvicorn --workers N`` on a loopback port (in-process job runner).
5. Drives each scenario with ``wrk`` (a Lua script adds the API key) or, without wrk, an
   asyncio + httpx load generator, after checking that the scenario answers 200.

Everything runs on one machine: the load tool, the server and PostgreSQL share its cores, so
the ratio to ``/health`` (measured by the same tool, server and machine, minutes apart) is the
number to compare; absolute requests/s move with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx
import psycopg
from sqlalchemy.engine import make_url

from itemsmith.items.schema import (
    Decision,
    IRTParameters,
    JudgeScore,
    Provenance,
    RunStatus,
    StructureReport,
    content_hash,
)
from itemsmith.service.auth import create_key
from itemsmith.templates_bank.storage import BankCreate, create_bank, get_engine, open_session, upgrade

CATEGORIES = ["pattern_recognition", "noise_understanding", "causality", "temporal_relation", "anomaly_detection",
              "similarity", "forecasting", "statistics"]
CRITERIA = ["relevance", "unambiguity", "specificity", "solvability", "needs_series"]
JUDGES = ["judge-a", "judge-b"]


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    cookie: bool = False  # the review page authenticates by its login cookie


@dataclass
class Measurement:
    scenario: str
    path: str
    tool: str
    requests: int
    errors: int
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms: float = 0.0  # CPU time of the uvicorn processes per request (less sensitive to a busy machine)
    ratio_to_health: float = 0.0  # requests/s over /health's requests/s in the same run


# --- database -------------------------------------------------------------------------------


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """A new, empty database; dropped when the block ends."""
    admin = make_url(admin_url)
    conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"itemsmith_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
        url = admin.set(drivername="postgresql", database=name).render_as_string(hide_password=False)
        try:
            yield url
        finally:
            get_engine(url).dispose()
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _verdicts(rng: random.Random, version_id: int) -> tuple[list[tuple], list[tuple]]:
    """(verdict rows, review rows) of one version: (version id, stage, payload JSON, model)."""
    verdicts: list[tuple] = []
    outcome = rng.random()
    ran = outcome >= 0.15
    structure = StructureReport(status=RunStatus.ok if ran else RunStatus.error, elapsed_ms=rng.uniform(20, 200),
                                error=None if ran else "ZeroDivisionError: division by zero (template line 3)")
    verdicts.append((version_id, "structure", structure.model_dump_json(), None))
    if not ran:
        verdicts.append((version_id, "decision", Decision(accepted=False, stage="structure").model_dump_json(), None))
        return verdicts, []
    quality = rng.uniform(3, 10)
    for judge in JUDGES:
        for criterion in CRITERIA:
            score = JudgeScore(judge=judge, criterion=criterion, score=min(10.0, max(1.0, rng.gauss(quality, 1))),
                               rationale="scores the item against the criterion", method="logprobs", attempts=1)
            verdicts.append((version_id, "judge", score.model_dump_json(), judge))
    if outcome < 0.35:
        decision = Decision(accepted=False, stage="judges", reasons=["mean judge score below 6"])
    elif outcome < 0.45:
        decision = Decision(accepted=False, stage="capability", reasons=["accuracy does not rise with rank"])
    else:
        decision = Decision(accepted=True, stage="capability")
        irt = IRTParameters(discrimination=rng.uniform(0.2, 2.5), difficulty=rng.gauss(0, 1),
                            discrimination_se=rng.uniform(0.05, 0.4), difficulty_se=rng.uniform(0.05, 0.4))
        verdicts.append((version_id, "irt", irt.model_dump_json(), None))
    verdicts.append((version_id, "decision", decision.model_dump_json(), None))
    reviews = []
    if decision.accepted and rng.random() < 0.15:
        reviews.append((version_id, "approve" if rng.random() < 0.8 else "reject", "reviewer", ""))
    return verdicts, reviews


def load_bank(url: str, templates: int, seed: int = 0) -> tuple[int, str, dict[str, int]]:
    """Bulk-load one bank at revision 0002 (before the summaries), then migrate to the newest
    revision (0003 backfills the summaries); returns (bank id, an API key of its owner, row counts
    and the migration's seconds)."""
    upgrade(url, "0002")
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name="bench", handler="synthetic", task="load test", owner="bench"))
        key, _ = create_key(session, "bench", name="load test")
    rng = random.Random(seed)
    revised = templates // 10
    first = templates - revised
    now = datetime.now(UTC)
    provenance = Provenance(origin="generated", generator="scripted:bench", created_at=now).model_dump_json()
    versions, verdicts, reviews = [], [], []
    for version_id in range(1, templates + 1):
        key_index = version_id - 1 if version_id <= first else version_id - first - 1
        parent = None if version_id <= first else key_index + 1
        source = f"# template {key_index} version {version_id}\ndef question(num_samples):\n    return []\n"
        versions.append((version_id, bank.id, f"t{key_index:05d}", content_hash(source), source,
                         f"Template {key_index} ({'revised' if parent else 'first'} version)",
                         CATEGORIES[key_index % len(CATEGORIES)], "[]", "synthetic", "medium", None, provenance,
                         parent, "bench", now + timedelta(microseconds=version_id)))
        version_verdicts, version_reviews = _verdicts(rng, version_id)
        verdicts += version_verdicts
        reviews += version_reviews
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as connection, connection.cursor() as cursor:
        with cursor.copy("COPY template_versions (id, bank_id, template_key, content_hash, source, title, category, "
                         "concepts, handler, difficulty, rationale, provenance, parent_version_id, created_by, "
                         "created_at) FROM STDIN") as copy:
            for row in versions:
                copy.write_row(row)
        cursor.execute("SELECT setval(pg_get_serial_sequence('template_versions', 'id'), %s)", [templates])
        with cursor.copy("COPY verdicts (template_version_id, stage, payload, model, created_at) FROM STDIN") as copy:
            for row in verdicts:
                copy.write_row((*row, now))
        with cursor.copy("COPY review_decisions (template_version_id, decision, reviewer, note, created_at) "
                         "FROM STDIN") as copy:
            for row in reviews:
                copy.write_row((*row, now))
        connection.commit()
    t0 = time.perf_counter()
    upgrade(url)
    migrate_s = round(time.perf_counter() - t0, 1)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")  # the steady state autovacuum keeps
    return bank.id, key, {"template_versions": len(versions), "verdicts": len(verdicts), "reviews": len(reviews),
                          "backfill_migration_s": migrate_s}


# --- server ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def group_cpu_seconds(group: int) -> float:
    """User + system CPU time of the live processes in a process group."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        if int(fields[2]) == group:  # pgrp; utime and stime follow at 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


@contextmanager
def serve(url: str, workers: int) -> Iterator[tuple[str, int]]:
    """``uvicorn api.app:create_app --factory --workers N`` on a free loopback port: (base URL,
    process group of the server)."""
    port = _free_port()
    env = {**os.environ, "ITEMSMITH_DATABASE_URL": url,
           "ITEMSMITH_API_JOB_RUNNER": "inprocess", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(  # our own interpreter
        [sys.executable, "-m", "uvicorn", "itemsmith.api.app:create_app", "--factory", "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--log-level", "warning", "--no-access-log"],
        env=env, cwd=ROOT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {process.returncode}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not answer /health within 60 s")
            time.sleep(0.2)
        yield base, process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # uvicorn's supervisor and its workers: our own process group
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# --- load -----------------------------------------------------------------------------------


def _headers(key: str, scenario: Scenario) -> dict[str, str]:
    return {"Cookie": f"itemsmith_key={key}"} if scenario.cookie else {"X-API-Key": key}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def run_wrk(base: str, key: str, scenario: Scenario, duration: int, connections: int, threads: int) -> Measurement:
    header_lines = "".join(f'wrk.headers["{name}"] = "{value}"\n' for name, value in _headers(key, scenario).items())
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(header_lines)
    try:
        result = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency",
                                 "--timeout", "30s",  # wrk's 2 s default abandons slow requests that keep running
                                 "-s", script.name, base + scenario.path], capture_output=True, text=True, check=True)
    finally:
        os.unlink(script.name)
    out = result.stdout
    percentiles = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", out, re.M))
    if set(percentiles) != {"50", "99"}:
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", out)) else 0
    errors += sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    return Measurement(scenario.name, scenario.path, "wrk", requests, errors,
                       float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
                       _ms(percentiles["50"]), _ms(percentiles["99"]))


async def _httpx_load(base: str, headers: dict[str, str], path: str, duration: int,
                      connections: int) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30) as client:
        start = time.perf_counter()
        deadline = start + duration

        async def user() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                try:
                    response = await client.get(path)
                    ok = response.status_code == 200
                except httpx.TransportError:
                    ok = False
                latencies.append((time.perf_counter() - t0) * 1e3)
                errors += not ok

        await asyncio.gather(*(user() for _ in range(connections)))
        return latencies, errors, time.perf_counter() - start


def run_httpx(base: str, key: str, scenario: Scenario, duration: int, connections: int) -> Measurement:
    latencies, errors, elapsed = asyncio.run(_httpx_load(base, _headers(key, scenario), scenario.path, duration,
                                                         connections))
    cuts = statistics.quantiles(latencies, n=100)
    return Measurement(scenario.name, scenario.path, "httpx", len(latencies), errors, len(latencies) / elapsed,
                       cuts[49], cuts[98])


def measure_size(args: argparse.Namespace, tool: str, templates: int) -> dict:
    """Load a bank of `templates` versions, serve it and measure every scenario."""
    with fresh_database(args.admin_url) as url:
        t0 = time.perf_counter()
        bank_id, key, counts = load_bank(url, templates)
        print(f"loaded {counts} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        listing = f"/banks/{bank_id}/templates?limit=50"
        scenarios = [
            Scenario("health (baseline: no key, no listing)", "/health"),
            Scenario("listing", listing),
            Scenario("listing status+category", f"{listing}&status=accepted&category=causality"),
            Scenario("listing min_score, deep page", f"{listing}&min_score=6&offset={templates // 4}"),
            Scenario("listing stage=review", f"{listing}&stage=review"),
            Scenario("listing every version", f"{listing}&latest=false"),
        ]
        if args.review_page:
            scenarios += [Scenario("review page", f"/review/banks/{bank_id}", cookie=True),
                          Scenario("review page filtered", f"/review/banks/{bank_id}?status=accepted&category=causality",
                                   cookie=True)]
        results: list[Measurement] = []
        with serve(url, args.server_workers) as (base, group):
            for scenario in scenarios:
                check = httpx.get(base + scenario.path, headers=_headers(key, scenario), timeout=30)
                if check.status_code != 200:
                    raise SystemExit(f"{scenario.name}: GET {scenario.path} answered {check.status_code}: "
                                     f"{check.text[:300]}")
                if scenario.path.startswith("/banks/"):
                    print(f"{scenario.name}: total {check.json()['total']}", file=sys.stderr)
                cpu_before = group_cpu_seconds(group)
                measure = (run_wrk(base, key, scenario, args.duration, args.connections, args.threads)
                           if tool == "wrk" else run_httpx(base, key, scenario, args.duration, args.connections))
                measure.server_cpu_ms = (group_cpu_seconds(group) - cpu_before) * 1e3 / max(1, measure.requests)
                measure.ratio_to_health = measure.requests_per_s / results[0].requests_per_s if results else 1.0
                results.append(measure)
                print(f"{templates:>7} {measure.scenario:40} {measure.requests_per_s:8.1f} req/s "
                      f"(x{measure.ratio_to_health:4.2f} of /health)  p50 {measure.p50_ms:7.1f} ms  "
                      f"p99 {measure.p99_ms:7.1f} ms  server CPU {measure.server_cpu_ms:5.1f} ms/req  "
                      f"({measure.requests} requests, {measure.errors} errors)", flush=True)
    return {"templates": templates, "rows": counts, "results": [asdict(r) for r in results]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--admin-url", default=os.environ.get("ITEMSMITH_TEST_POSTGRES_URL",
                                                              "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--templates", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--server-workers", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10, help="seconds per scenario")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--tool", choices=["auto", "wrk", "httpx"], default="auto")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--review-page", action="store_true",
                        help="also load the review page (it renders the bank's calibration and diversity panel)")
    args = parser.parse_args()
    tool = args.tool if args.tool != "auto" else ("wrk" if shutil.which("wrk") else "httpx")
    sizes = [measure_size(args, tool, templates) for templates in args.templates]
    info = {"load_average": os.getloadavg(), "server_workers": args.server_workers, "connections": args.connections,
            "duration_s": args.duration, "tool": tool, "cpus": os.cpu_count(), "sizes": sizes}
    if args.json:
        args.json.write_text(json.dumps(info, indent=1) + "\n")


if __name__ == "__main__":
    main()
