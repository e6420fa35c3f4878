"""PostgreSQL restarts under running jobs: real ``itemsmith worker`` processes (Celery) on a
PostgreSQL server and a Redis server of this script's own (the machine's shared servers are never
restarted), the server stopped (``pg_ctl -m fast``: every session gets AdminShutdown) and started
again while an author, an evaluate or a calibrate job runs.

    python benchmarks/database_restart_jobs.py [--runs 5] [--kinds author,evaluate,calibrate]
                                               [--downtime-s 2] [--out benchmarks/results/FILE.json]

Each run submits one job, waits until it is running and has done part of its work, restarts the
server, and waits for the job to end. The restart moves through the job from run to run: an
author job's run ``i`` restarts once ``i % 3`` templates are accepted (0: its slots started);
an evaluate job's once ``4 + 12 i`` of its 64 answers are in; a calibrate job's as soon as it
runs (a fit takes about a second: where the restart lands is recorded). Recorded per run: the job's status and claims, how its run was
interrupted (its status events), and what it stored, against an uninterrupted reference run:

- author (scripted planner and generator, the models the tests use: three curated templates,
  one second a generator call): the bank's versions and each version's verdicts (stage names), which must equal the
  reference's, each template and verdict once; template events once each;
- evaluate (a scripted respondent, 0.3 s a call, on a release of 4 curated templates x 4 seeds x
  4 items): the job's stored answers, one per item, no key twice;
- calibrate (on 6 stored respondents): the irt verdicts stored under the job's id, one per
  template of the release.

Prints one JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("ITEMSMITH_DIVERSITY_EMBEDDER", "off")
os.environ.setdefault("ITEMSMITH_DEFAULT_JUDGES", "[]")
os.environ.setdefault("ITEMSMITH_DEFAULT_STUDENTS", "[]")
os.environ.setdefault("ITEMSMITH_REDERIVATION_ENABLED", "false")

from itemsmith.service.jobs import CeleryRunner, execute_job, get_job, list_events, submit_job, upgrade_database
from itemsmith.service.jobs._store import create_job
from itemsmith.service.settings import ServiceSettings
from itemsmith.templates_bank.releases import ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    get_engine,
    import_curated,
    list_evaluation_responses,
    list_verdicts,
    list_versions,
    open_session,
)
from tests.service.conftest import AUTHOR_TITLES, PrivatePostgres, PrivateRedis, write_author_scripts

OWNER = "alice"
RELEASE_TEMPLATES = ["exam_trend_direction", "feat_seasonality_classify", "exam_granger_direction",
                     "feat_trend_classify"]
LEASE_S = 10.0


def _respondent(folder: Path, name: str, letter: str, latency_s: float) -> str:
    """A scripted model that always answers `letter` (its file names the respondent)."""
    path = folder / f"respondent-{name}.json"
    path.write_text(json.dumps({"latency_s": latency_s, "replies": [f"Answer: {letter}"]}))
    return f"scripted:{path}"


class Workers:
    """``itemsmith worker -c 1`` processes, each in a process group of its own."""

    def __init__(self, env: dict[str, str], logs: Path, count: int) -> None:
        self.logs = logs
        self.processes = [subprocess.Popen([sys.executable, "-c", "from itemsmith.cli.app import app; app()", "worker",
                                            "-c", "1"], env=env, stdout=(logs / f"worker-{i}.log").open("wb"),
                                           stderr=subprocess.STDOUT, start_new_session=True) for i in range(count)]

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)

    def tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in sorted(self.logs.iterdir()))


def _wait(predicate: Callable[[], bool], what: str, timeout_s: float, workers: Workers) -> float:
    started = time.monotonic()
    while True:
        try:
            if predicate():
                return time.monotonic() - started
        except Exception:  # noqa: BLE001 - the database is away for a moment
            pass
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"timed out waiting for {what}\n{workers.tail()}")
        time.sleep(0.1)


class Bench:
    def __init__(self, args: argparse.Namespace, root: Path) -> None:
        self.args = args
        self.root = root
        self.postgres = PrivatePostgres()
        self.redis = PrivateRedis()
        self.url = self.postgres.url
        upgrade_database(self.url)
        self.engine = get_engine(self.url)
        self.scripts = root / "scripts"
        self.scripts.mkdir()
        self.settings = ServiceSettings(database_url=self.url, redis_url=self.redis.url, job_runner="celery",
                                        uploads_dir=root / "uploads", job_lease_s=LEASE_S)
        os.environ.update(ITEMSMITH_API_MODEL_PROVIDERS='["scripted"]', ITEMSMITH_SCRIPTED_DIR=str(self.scripts))
        env = {**os.environ, "ITEMSMITH_DATABASE_URL": self.url, "ITEMSMITH_API_REDIS_URL": self.redis.url,
               "ITEMSMITH_API_JOB_LEASE_S": str(LEASE_S), "ITEMSMITH_API_UPLOADS_DIR": str(root / "uploads")}
        logs = root / "logs"
        logs.mkdir()
        self.workers = Workers(env, logs, args.workers)
        self.runner = CeleryRunner(self.engine, self.settings)
        self.banks = 0

    def close(self) -> None:
        self.workers.stop()
        self.runner.stop()
        self.engine.dispose()
        self.redis.close()
        self.postgres.close()

    # --- helpers -------------------------------------------------------------------------------

    def job(self, job_id: str) -> Any:
        with open_session(self.engine) as session:
            return get_job(session, job_id)

    def bank(self, prefix: str, **kwargs: Any) -> Any:
        self.banks += 1
        with open_session(self.engine) as session:
            return create_bank(session, BankCreate(name=f"{prefix}-{self.banks}", handler="synthetic", owner=OWNER,
                                                   **kwargs))

    def restart(self) -> float:
        """Stop the server (fast: every session is terminated), keep it down, start it again."""
        started = time.monotonic()
        self.postgres.stop()
        time.sleep(self.args.downtime_s)
        self.postgres.start()
        return time.monotonic() - started

    def run_job(self, kind: str, request: dict[str, Any], bank_id: int, ready: Callable[[Any], bool],
                restart: bool) -> dict[str, Any]:
        """Submit the job, restart the server once `ready(job)` (with `restart`), wait for its end."""
        job = submit_job(self.engine, kind=kind, owner=OWNER, request=request, bank_id=bank_id, runner=self.runner)
        submitted = time.monotonic()
        out: dict[str, Any] = {"job": job.id}
        _wait(lambda: ready(self.job(job.id)), f"{kind} job {job.id} to be under way", 300, self.workers)
        if restart:
            before = self.job(job.id)
            out["restart_at_s"] = round(time.monotonic() - submitted, 2)
            out["status_at_restart"] = before.status
            out["progress_at_restart"] = before.progress
            out["restart_s"] = round(self.restart(), 2)
        _wait(lambda: self.job(job.id).status in ("succeeded", "failed", "cancelled"), f"{kind} job {job.id} to end",
              600, self.workers)
        out["wall_s"] = round(time.monotonic() - submitted, 2)
        finished = self.job(job.id)
        with open_session(self.engine) as session:
            events = list_events(session, job.id)
        statuses = [e.payload for e in events if e.kind == "status"]
        out.update(status=finished.status, error=finished.error, attempts=finished.attempts,
                   succeeded_events=sum(s["status"] == "succeeded" for s in statuses),
                   requeued=[s.get("reason") for s in statuses if s["status"] == "queued" and s.get("reason")],
                   interrupted=finished.attempts > 1 or any(s["status"] == "queued" and s.get("reason")
                                                            for s in statuses))
        out["_events"] = events
        out["_result"] = finished.result
        return out

    # --- the kinds -----------------------------------------------------------------------------

    def stored_templates(self, bank_id: int) -> list[tuple[str, list[str]]]:
        with open_session(self.engine) as session:
            return sorted((v.content_hash, sorted(x.stage for x in list_verdicts(session, v.id)))
                          for v in list_versions(session, bank_id))

    def author(self, index: int | None) -> dict[str, Any]:
        bank = self.bank("author")
        folder = self.scripts / f"author-{self.banks}"
        folder.mkdir()
        scripts = write_author_scripts(folder, latency_s=self.args.generator_latency_s)
        request = {"bank_id": bank.id, "handler": "synthetic", "task": "questions about synthetic series",
                   "templates": len(AUTHOR_TITLES), **scripts, "slots": 1, "sandbox_workers": 1, "num_samples": 3}
        accepted = 0 if index is None else index % 3
        out = self.run_job("author", request, bank.id, lambda j: j.status == "running" and bool(j.progress)
                           and j.progress.get("accepted", 0) >= accepted, index is not None)
        out["stored"] = self.stored_templates(bank.id)
        out["template_events"] = sum(e.kind == "template" for e in out.pop("_events"))
        out.pop("_result")
        return out

    def released_bank(self) -> Any:
        bank = self.bank("eval")
        with open_session(self.engine) as session:
            import_curated(session, bank.id, reviewer="curator", template_ids=RELEASE_TEMPLATES)
            create_release(session, ReleaseCreate(bank=bank.name, seeds=[0, 1, 2, 3], num_samples=4,
                                                  created_by="curator"))
        return bank

    def evaluate(self, index: int | None, bank: Any) -> dict[str, Any]:
        model = _respondent(self.scripts, "evaluated", "A", self.args.respondent_latency_s)
        request = {"bank": bank.name, "release": 1, "model": model, "concurrency": 2}
        answered = 4 + 12 * (index or 0)
        out = self.run_job("evaluate", request, bank.id, lambda j: j.progress.get("answered", 0) >= answered,
                           index is not None)
        with open_session(self.engine) as session:
            answers = list_evaluation_responses(session, evaluation_id=out["job"])
        keys = Counter((a.template_version_id, a.text_format, a.item_hash, a.item_index) for a in answers)
        result = out.pop("_result") or {}
        out.update(answers=len(answers), distinct_answers=len(keys), items=result.get("overall", {}).get("n"),
                   progress_events=sum(e.kind == "progress" for e in out.pop("_events")))
        return out

    def calibrated_bank(self) -> Any:
        """A released bank with six respondents' answers stored (evaluate jobs run in this process)."""
        bank = self.released_bank()
        settings = self.settings.model_copy(update={"job_lease_s": 600.0})
        for i, letter in enumerate("ABCDAB"):
            model = _respondent(self.scripts, f"{bank.name}-{i}", letter, 0.0)
            with open_session(self.engine) as session:
                job_id = create_job(session, kind="evaluate", owner=OWNER, bank_id=bank.id,
                                    request={"bank": bank.name, "release": 1, "model": model}).id
            assert execute_job(self.engine, job_id, worker="seed", settings=settings) == "succeeded", self.job(job_id).error
        return bank

    def calibrate(self, index: int | None, bank: Any) -> dict[str, Any]:
        request = {"bank": bank.name, "release": 1}
        out = self.run_job("calibrate", request, bank.id, lambda j: j.status == "running", index is not None)
        with open_session(self.engine) as session:
            versions = [v.id for v in list_versions(session, bank.id)]
            irt = [x for v in versions for x in list_verdicts(session, v, "irt") if x.run_id == out["job"]]
        out.pop("_events")
        result = out.pop("_result") or {}
        out.update(irt_verdicts=len(irt), templates=len(versions), respondents=len(result.get("respondents", [])))
        return out


def _summary(kind: str, reference: dict[str, Any], runs: list[dict[str, Any]]) -> dict[str, Any]:
    def once(run: dict[str, Any]) -> bool:
        if run["status"] != "succeeded" or run["succeeded_events"] != 1:
            return False
        if kind == "author":
            return run["stored"] == reference["stored"] and run["template_events"] == len(reference["stored"])
        if kind == "evaluate":
            return run["answers"] == run["distinct_answers"] == reference["answers"] == run["items"]
        return run["irt_verdicts"] == run["templates"] == reference["irt_verdicts"]

    return {"runs": len(runs), "succeeded_once_and_stored_once": sum(once(r) for r in runs),
            "interrupted_mid_run": sum(r["interrupted"] for r in runs),
            "failed": sum(r["status"] != "succeeded" for r in runs),
            "wall_s": [r["wall_s"] for r in runs], "reference_wall_s": reference["wall_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kinds", default="author,evaluate,calibrate")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--downtime-s", type=float, default=2.0)
    parser.add_argument("--generator-latency-s", type=float, default=1.0)
    parser.add_argument("--respondent-latency-s", type=float, default=0.3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report: dict[str, Any] = {"benchmark": "database_restart_jobs", "runs": args.runs, "downtime_s": args.downtime_s,
                              "workers": args.workers, "load_before": os.getloadavg(), "kinds": {}}
    with tempfile.TemporaryDirectory(prefix="itemsmith-restart-") as folder:
        bench = Bench(args, Path(folder))
        try:
            for kind in args.kinds.split(","):
                bank = None
                if kind == "evaluate":
                    bank = bench.released_bank()
                elif kind == "calibrate":
                    bank = bench.calibrated_bank()
                run = getattr(bench, kind)
                call = (lambda index, run=run, bank=bank: run(index, bank)) if bank is not None else run
                reference = call(None)
                runs = []
                for i in range(args.runs):
                    runs.append(call(i))
                    print(f"{kind} run {i + 1}: {runs[-1]['status']}, attempts {runs[-1]['attempts']}, "
                          f"{runs[-1]['wall_s']} s", file=sys.stderr, flush=True)
                report["kinds"][kind] = {"summary": _summary(kind, reference, runs), "reference": reference,
                                         "restarted": runs}
        finally:
            bench.close()
    report["load_after"] = os.getloadavg()
    text = json.dumps(report, indent=1, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
