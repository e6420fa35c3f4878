"""A large benchmark file in and out of the importer: time, memory, progress, cancel.

    python benchmarks/import_speed.py [--rows 120000] [--groups 2000] [--out DIR] [--audit] [--skip-api|--skip-cli]

Writes a JSON-lines file in TimeSeriesExam's format (``--rows`` rows in ``--groups`` groups of
one category each, short series, three options; about 160 bytes a row), then measures:

- the command line: ``itemsmith bank import-items --format tse --no-audit`` (``--audit``: with
  the per-group audit) on a fresh SQLite bank: wall time (the process, and the import as it
  reports it), CPU time (what the wall time would be on an idle machine) and peak memory;
- the service, on a fresh SQLite database: ``POST /banks/imports`` (the upload streamed to disk and
  every row checked) timed, then the ``import`` job it queues run as a worker does, in a thread:
  the time to its first progress event, the longest gap between progress events, the job's
  time, and this process's peak memory; then a second import of the same file into a second bank,
  cancelled as soon as its first group is stored, and the time from the cancel request to the job
  ending (``cancelled``);
- the reference: reading the same file into a Hugging Face ``datasets.Dataset`` with
  ``Dataset.from_json`` (when ``datasets`` is installed), what reading the file costs elsewhere.

The service part waits on the job's events (it polls the events table), never on a fixed delay.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.queued_runner import QueuedRunner
from itemsmith.templates_bank.storage import open_session

_POLL_S = 0.05


def write_file(path: Path, rows: int, groups: int, seed: int = 0) -> Path:
    """`rows` TimeSeriesExam rows in `groups` groups (tid), contiguous, options drawn per row."""
    rng = random.Random(seed)
    per = rows // groups
    options = ["up", "down", "flat"]
    with path.open("w") as sink:
        for group in range(groups):
            for i in range(per):
                sink.write(json.dumps({"question": f"Trend of series {group}.{i}?", "options": options,
                                       "answer": options[rng.randrange(3)], "question_type": "multiple_choice",
                                       "ts": [round(rng.gauss(0, 1), 2) for _ in range(4)], "tid": group,
                                       "category": f"category {group % 5}"}, separators=(",", ":")) + "\n")
    return path


def _peak_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def cli_import(path: Path, out: Path, audit: bool) -> dict[str, Any]:
    db = f"sqlite:///{out / 'cli.sqlite'}"
    command = [sys.executable, "-c", "from itemsmith.cli.app import app; app()", "bank", "import-items", "big", str(path), "--format", "tse",
               "--db", db, "--json", "--audit" if audit else "--no-audit"]
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"the CLI import failed:\n{done.stdout}\n{done.stderr}")
    report = json.loads(done.stdout[done.stdout.index("{"):])
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "import_s": round(report["elapsed_ms"] / 1000, 2),
            "peak_mib": round(_peak_mib(resource.RUSAGE_CHILDREN), 1), "rows": report["rows"],
            "groups": report["groups"], "new_versions": report["new_versions"], "audited": report["audited"]}


def _progress_times(engine: Any, job_id: str, thread: threading.Thread) -> list[tuple[float, dict[str, Any]]]:
    """Each progress event as it is seen (time seen, payload), until the job's thread ends."""
    from itemsmith.service.jobs import list_events

    seen: list[tuple[float, dict[str, Any]]] = []
    while thread.is_alive():
        with open_session(engine) as session:
            events = list_events(session, job_id, kind="progress")
        seen += [(time.perf_counter(), e.payload) for e in events[len(seen):]]
        time.sleep(_POLL_S)
    return seen


def service_import(path: Path, out: Path, audit: bool) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from itemsmith.api.app import create_app
    from itemsmith.api.settings import ApiSettings
    from itemsmith.service.auth import create_key
    from itemsmith.service.jobs import cancel_job, execute_job, list_events, upgrade_database

    url = f"sqlite:///{out / 'service.sqlite'}"
    upgrade_database(url)
    settings = ApiSettings(database_url=url, uploads_dir=out / "uploads")
    with open_session(url) as session:
        key, _ = create_key(session, "bench")
    app = create_app(settings)
    app.state.job_runner = QueuedRunner()
    engine = app.state.engine
    form = {"format": "tse", **({} if audit else {"audit": "false"})}

    def upload(name: str) -> tuple[float, str]:
        with TestClient(app) as client, path.open("rb") as stream:
            started = time.perf_counter()
            response = client.post("/banks/imports", data={"name": name, **form}, headers={"X-API-Key": key},
                                   files={"file": (path.name, stream, "application/x-ndjson")})
            elapsed = time.perf_counter() - started
        if response.status_code != 202:
            raise SystemExit(f"the upload was refused: {response.text[:2000]}")
        return elapsed, response.json()["job"]["id"]

    upload_s, job_id = upload("big")
    outcome: dict[str, str] = {}
    thread = threading.Thread(target=lambda: outcome.update(
        status=execute_job(engine, job_id, worker="bench", settings=settings)))
    started = time.perf_counter()
    thread.start()
    events = _progress_times(engine, job_id, thread)
    ran = time.perf_counter() - started
    seen = [started] + [t for t, _ in events]
    result: dict[str, Any] = {"upload_s": round(upload_s, 2), "job_s": round(ran, 2), "job": outcome["status"],
                              "first_progress_s": round(events[0][0] - started, 2) if events else None,
                              "longest_gap_s": round(max(b - a for a, b in zip(seen, seen[1:], strict=False)), 2)
                              if events else None, "progress_events": len(events),
                              "last_progress": events[-1][1] if events else None,
                              "peak_mib": round(_peak_mib(resource.RUSAGE_SELF), 1)}

    _, second = upload("again")
    cancel: dict[str, float] = {}

    def run_second() -> None:
        outcome["second"] = execute_job(engine, second, worker="bench", settings=settings)
        cancel["ended"] = time.perf_counter()

    thread = threading.Thread(target=run_second)
    thread.start()
    while thread.is_alive() and "asked" not in cancel:
        with open_session(engine) as session:
            stored = [e for e in list_events(session, second, kind="progress") if e.payload.get("groups_stored")]
            if stored:
                cancel_job(session, second, "bench")
                session.commit()
                cancel["asked"] = time.perf_counter()
        time.sleep(_POLL_S)
    thread.join()
    result["cancel"] = {"status": outcome["second"],
                        "latency_s": round(cancel["ended"] - cancel["asked"], 2) if "asked" in cancel else None}
    return result


def datasets_reference(path: Path) -> dict[str, Any] | None:
    try:
        from datasets import Dataset
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        loaded = Dataset.from_json(str(path), cache_dir=cache)
        return {"rows": len(loaded), "from_json_s": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=120_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=None, help="folder for the files (default: a temporary one)")
    parser.add_argument("--audit", action="store_true", help="audit each group as it is stored (slow on large files)")
    parser.add_argument("--skip-api", action="store_true", help="only the command line and the reference")
    parser.add_argument("--skip-cli", action="store_true", help="only the service and the reference")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        path = write_file(out / "items.jsonl", args.rows, args.groups)
        report: dict[str, Any] = {"rows": args.rows, "groups": args.groups,
                                  "file_mib": round(path.stat().st_size / 2**20, 1), "audit": args.audit}
        if not args.skip_cli:
            report["cli"] = cli_import(path, out, args.audit)
            print(json.dumps(report["cli"]), flush=True)
        if not args.skip_api:
            report["service"] = service_import(path, out, args.audit)
            print(json.dumps(report["service"]), flush=True)
        report["datasets_from_json"] = datasets_reference(path)
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
