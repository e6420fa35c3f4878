"""Schemathesis over every operation of a real `itemsmith serve` (SQLite, in-process jobs): server
errors and every mismatch between what the server does and its OpenAPI description.

    python benchmarks/api_conformance.py [--max-examples 25] [--out benchmarks/results/api_conformance.json]

The server runs on a fresh data folder with one key and a bank of curated templates (so generated
ids 1, 2, ... reach real rows). Schemathesis' CLI runs its examples, coverage and fuzzing phases with
every check (``--checks all``: 405 with ``Allow``, documented status codes, schema-valid requests
accepted, invalid ones refused, response schemas, ...); its output is summarised as failures by kind
and operation (``--transcript`` keeps it whole). Prints one JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx


def _seed(root: Path) -> tuple[str, str]:
    """(database URL, API key): a migrated SQLite bank with curated templates of the synthetic handler."""
    from itemsmith.service.auth import create_key
    from itemsmith.service.jobs import upgrade_database
    from itemsmith.templates_bank.storage import BankCreate, create_bank, import_curated, open_session

    url = f"sqlite:///{root / 'bank.sqlite'}"
    upgrade_database(url)
    with open_session(url) as session:
        key, _ = create_key(session, "alice", name="conformance")
        bank = create_bank(session, BankCreate(name="alice-bank", handler="synthetic", task="trends", owner="alice"))
        import_curated(session, bank.id, reviewer="curator", template_ids=["exam_trend_direction"])
    return url, key


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(root: Path, url: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "ITEMSMITH_DATA_DIR": str(root), "ITEMSMITH_API_JOB_RUNNER": "inprocess",
           "ITEMSMITH_API_UPLOADS_DIR": str(root / "uploads")}
    log = (root / "server.log").open("wb")
    process = subprocess.Popen([str(Path(sys.executable).with_name("itemsmith")), "serve", "--port", str(port),
                                "--db", url], env=env, stdout=log, stderr=log, cwd=root)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the server exited: {(root / 'server.log').read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise SystemExit("the server did not answer /health in 120 s")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.2)


def _summary(transcript: str) -> dict[str, Any]:
    """Failures by kind (the run's summary lines) and by operation (its failure headings)."""
    by_kind = {match[1]: int(match[2]) for match in re.finditer(r"❌ (ST\d+ [^:\n]+): (\d+)", transcript)}
    operations: Counter[str] = Counter()
    current = None
    for line in transcript.splitlines():
        if heading := re.fullmatch(r"_+ ((?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+) _+", line.strip()):
            current = heading[1]
        elif current and (kind := re.match(r"- (ST\d+ .+)", line.strip())):
            operations[f"{current}: {kind[1]}"] += 1
    server_errors = len(re.findall(r"\[5\d\d\]", transcript))
    return {"failures": sum(by_kind.values()), "by_kind": by_kind, "server_error_responses_shown": server_errors,
            "by_operation": dict(operations)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/api_conformance.json"))
    parser.add_argument("--transcript", type=Path, default=None, help="also keep schemathesis' output here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="itemsmith-conformance-") as folder:
        root = Path(folder)
        url, key = _seed(root)
        process, base = _serve(root, url)
        try:
            started = time.monotonic()
            run = subprocess.run(
                [str(Path(sys.executable).with_name("st")), "run", f"{base}/openapi.json", "--checks", "all",
                 "-H", f"X-API-Key: {key}",
                 "--phases", "examples,coverage,fuzzing", "--max-examples", str(args.max_examples),
                 "--generation-deterministic", "--workers", "1", "--no-color"],
                capture_output=True, text=True, cwd=root)
            wall = time.monotonic() - started
        finally:
            process.terminate()
            process.wait(timeout=30)
        if args.transcript is not None:
            args.transcript.write_text(run.stdout + run.stderr)
        cases = re.search(r"(\d+) generated", run.stdout)
        result = {"load_1_5_15": [round(x, 2) for x in os.getloadavg()], "wall_s": round(wall, 1),
                  "max_examples": args.max_examples, "schemathesis_exit": run.returncode,
                  "test_cases": int(cases[1]) if cases else None, **_summary(run.stdout)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
