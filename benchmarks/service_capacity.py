"""The service under load, as a client sees it: a real `itemsmith serve` on a fresh PostgreSQL
database, driven over HTTP.

    python benchmarks/service_capacity.py [--admin-url postgresql://postgres@127.0.0.1:5432/postgres]
                                          [--requests 200] [--slow 6] [--port 8765]

1. ``listing``: `--requests` concurrent ``GET /banks`` of one key: status codes and wall time.
2. ``cross_tenant``: bob's ``GET /templates/{id}`` (a fast template, a seed never sampled) cold
   (the sandbox pool starts), alone once warm, then while alice has `--slow` requests for a slow template (a CPU-bound loop of a few seconds)
   in flight, and ``/health`` then; alice's status codes.

Run it with another source tree first on ``PYTHONPATH`` (a folder holding ``itemsmith/`` whose
parts link to an older checkout) to measure the code before a change. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

SLOW_SOURCE = '''
def question(num_samples):
    total = 0
    for i in range(25_000_000):
        total += i % 7
    values = rng.normal(size=30).cumsum()
    top = int(np.argmax(values))
    wrong = [int(x) for x in rng.choice([j for j in range(30) if j != top], size=3, replace=False)]
    return [mc_item("At which index is the series highest?", top, wrong, series=[series(values, name="x")],
                    rationale=f"argmax is {top} ({total})") for _ in range(num_samples)]
'''
FAST_SOURCE = SLOW_SOURCE.replace("range(25_000_000)", "range(10)")


def _seed(url: str) -> dict[str, Any]:
    from itemsmith.items.schema import Provenance, Template
    from itemsmith.service.auth import create_key
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.storage import BankCreate, add_template_version, create_bank, open_session

    upgrade_database(url)
    out: dict[str, Any] = {}
    with open_session(url) as session:
        for owner, source in (("alice", SLOW_SOURCE), ("bob", FAST_SOURCE)):
            key, _ = create_key(session, owner, name="bench")
            bank = create_bank(session, BankCreate(name=f"{owner}-bank", handler="synthetic", owner=owner))
            version = add_template_version(session, bank.id, Template(
                id="t", source=source, title="t", category="math", handler="synthetic",
                provenance=Provenance(origin="user")), created_by="bench")
            out[owner] = {"key": key, "version": version.id}
    return out


async def _listing(base: str, key: str, n: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as client:
        started = time.monotonic()
        responses = await asyncio.gather(*(client.get("/banks", headers={"X-API-Key": key}) for _ in range(n)),
                                         return_exceptions=True)
        wall = time.monotonic() - started
    codes = Counter(r.status_code if isinstance(r, httpx.Response) else type(r).__name__ for r in responses)
    return {"requests": n, "statuses": dict(codes), "server_errors": sum(v for k, v in codes.items()
                                                                          if isinstance(k, int) and k >= 500),
            "wall_s": round(wall, 2)}


async def _timed(client: httpx.AsyncClient, path: str, key: str | None = None) -> tuple[int, float]:
    started = time.monotonic()
    response = await client.get(path, headers={"X-API-Key": key} if key else {})
    return response.status_code, round(time.monotonic() - started, 2)


async def _cross_tenant(base: str, seeded: dict[str, Any], slow: int) -> dict[str, Any]:
    alice, bob = seeded["alice"], seeded["bob"]
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        cold = await _timed(client, f"/templates/{bob['version']}?seed=0", bob["key"])  # the pool starts
        await asyncio.sleep(15)  # let a pool start its other workers, where it does
        alone = await _timed(client, f"/templates/{bob['version']}?seed=1", bob["key"])
        pages = [asyncio.create_task(_timed(client, f"/templates/{alice['version']}?seed={i}", alice["key"]))
                 for i in range(slow)]
        await asyncio.sleep(1.0)  # alice's requests are in (a benchmark, not a test: a fixed pause is fine)
        loaded = await _timed(client, f"/templates/{bob['version']}?seed=2", bob["key"])
        health = await _timed(client, "/health")
        alice_results = await asyncio.gather(*pages)
    return {"slow_in_flight": slow, "bob_cold": {"status": cold[0], "s": cold[1]},
            "bob_alone": {"status": alone[0], "s": alone[1]},
            "bob_while_alice_slow": {"status": loaded[0], "s": loaded[1]},
            "health_while_alice_slow": {"status": health[0], "s": health[1]},
            "alice": dict(Counter(code for code, _ in alice_results)),
            "alice_slowest_s": max(s for _, s in alice_results)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--slow", type=int, default=6)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(args.admin_url)
    name = f"itemsmith_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = admin.set(database=name).render_as_string(hide_password=False)
    base = f"http://127.0.0.1:{args.port}"
    server = None
    try:
        seeded = _seed(url)
        env = {**os.environ, "ITEMSMITH_DATABASE_URL": url, "ITEMSMITH_API_UPLOADS_DIR": f"/tmp/{name}-uploads"}
        server = subprocess.Popen([sys.executable, "-c", "from itemsmith.cli.app import app; app()", "serve",
                                   "--port", str(args.port)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=open(f"/tmp/{name}-server.log", "wb"))
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"the server did not start (see /tmp/{name}-server.log)")
            time.sleep(0.3)
        listing = asyncio.run(_listing(base, seeded["alice"]["key"], args.requests))
        cross = asyncio.run(_cross_tenant(base, seeded, args.slow))
        source = str(Path(sys.modules["itemsmith"].__file__ or "").parent)
        print(json.dumps({"itemsmith": source, "listing": listing, "cross_tenant": cross}))
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        from itemsmith.templates_bank.storage import get_engine

        get_engine(url).dispose()
        with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
