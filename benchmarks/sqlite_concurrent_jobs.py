"""Concurrent jobs on the default service: `itemsmith serve` on its SQLite file with in-process jobs.

    python benchmarks/sqlite_concurrent_jobs.py [--rounds 3] [--templates 8] [--out benchmarks/results/sqlite_concurrent_jobs.json]

A bank of the synthetic handler's curated templates is released through the API; then each round
submits three jobs at once over HTTP (an evaluation, a re-verification with a judge and a student,
and a second evaluation in two text formats), all answering through recorded-reply models, and
waits for them. Counted per round: each job's status and claims (``attempts``: more than one means
it went back to the queue), and the server log's "transient database error" and "database is
locked" lines. Prints one JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ANSWER = {"replies": ["Answer: A"], "latency_s": 1.0}  # a model call takes a while, as a local one does
JUDGE = {"replies": ["The question is clear and needs the series.\nScore: 8"], "latency_s": 1.0}


def _seed(root: Path, templates: int) -> tuple[str, str, int]:
    """(database URL, API key, bank id): curated templates of the synthetic handler, approved."""
    from itemsmith.service.auth import create_key
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.curated import load_curated
    from itemsmith.templates_bank.storage import BankCreate, create_bank, import_curated, open_session

    url = f"sqlite:///{root / 'itemsmith.sqlite'}"
    upgrade_database(url)
    chosen = [t.id for t in load_curated().values() if t.handler in (None, "synthetic")][:templates]
    with open_session(url) as session:
        key, _ = create_key(session, "alice", name="bench")
        bank = create_bank(session, BankCreate(name="bench", handler="synthetic", task="trends", owner="alice"))
        import_curated(session, bank.id, reviewer="curator", template_ids=chosen)
    return url, key, bank.id


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(client: httpx.Client, job_id: str, timeout_s: float = 900) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return job
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job_id} did not finish in {timeout_s} s: {job}")
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--templates", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/sqlite_concurrent_jobs.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="itemsmith-sqlite-jobs-") as folder:
        root = Path(folder)
        scripts = root / "scripts"
        scripts.mkdir()
        (scripts / "answer.json").write_text(json.dumps(ANSWER))
        (scripts / "judge.json").write_text(json.dumps(JUDGE))
        url, key, bank_id = _seed(root, args.templates)
        port = _free_port()
        env = {**os.environ, "ITEMSMITH_DATA_DIR": str(root), "ITEMSMITH_API_JOB_RUNNER": "inprocess",
               "ITEMSMITH_SCRIPTED_DIR": str(scripts),
               "ITEMSMITH_API_MODEL_PROVIDERS": '["openai", "anthropic", "local", "scripted"]'}
        log = root / "server.log"
        with log.open("wb") as sink:
            server = subprocess.Popen([str(Path(sys.executable).with_name("itemsmith")), "serve", "--port", str(port),
                                       "--db", url], env=env, stdout=sink, stderr=sink)
        rounds: list[dict[str, Any]] = []
        try:
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": key}, timeout=60)
            deadline = time.monotonic() + 120
            while True:
                if server.poll() is not None:
                    raise SystemExit(log.read_text()[-3000:])
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            released = _wait(client, client.post(f"/banks/{bank_id}/releases", json={"seeds": [0, 1]})
                             .raise_for_status().json()["id"])
            release_id = released["result"]["release_id"]
            requests = [("evaluations", {"model": "scripted:answer.json"}),
                        ("reverify", {"judges": ["scripted:judge.json"], "students": ["scripted:answer.json@1"]}),
                        ("evaluations", {"model": "scripted:answer.json", "formats": ["plain", "csv"]})]
            for number in range(args.rounds):
                started = time.monotonic()
                job_ids = [client.post(f"/releases/{release_id}/{path}", json=body).raise_for_status().json()["id"]
                           for path, body in requests]
                jobs = [_wait(client, job_id) for job_id in job_ids]
                rounds.append({"round": number + 1, "wall_s": round(time.monotonic() - started, 1),
                               "jobs": [{"kind": j["kind"], "status": j["status"], "attempts": j["attempts"],
                                         "error": j["error"]} for j in jobs]})
        finally:
            server.terminate()
            server.wait(timeout=60)
        text = log.read_text()
    requeued = sum(j["attempts"] - 1 for r in rounds for j in r["jobs"])
    result = {"load_1_5_15": [round(x, 2) for x in os.getloadavg()], "rounds": rounds,
              "jobs": sum(len(r["jobs"]) for r in rounds),
              "failed": sum(j["status"] != "succeeded" for r in rounds for j in r["jobs"]),
              "requeued_claims": requeued, "transient_lines": text.count("transient database error"),
              "database_is_locked_lines": text.count("database is locked")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
