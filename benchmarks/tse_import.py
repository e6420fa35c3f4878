"""Import and audit a TimeSeriesExam-format benchmark: build the file, time the import, audit the release.

    python benchmarks/tse_import.py [--templates 105] [--per-template 8] [--out DIR] [--subset 100] [--api]

Builds a `qa_dataset.json` in TimeSeriesExam's format (``question``, ``options`` as text or bare
floats, ``answer`` the key's text, ``question_type``, ``ts`` or ``ts1``/``ts2`` without timestamps
or units, ``tid``, ``category``, ``subcategory``, ``difficulty``, ``relevant_concepts``) from the
synthetic generators (`handlers.synthetic`: every key is true of its series by construction), with
two flaws planted for the audit to find: in two templates of three the key positions follow a
balanced schedule (each position keyed equally often, as hand-balanced benchmarks do), and 31
Anomaly Detection questions are exact copies of others. Then, on a fresh SQLite bank: `itemsmith
bank import-items` (timed, and again to show it stores nothing twice), `release create`, `release
audit` (timed), and prints what the audit flags against what was planted. ``--subset N`` also
writes the first N items (whole templates) as ``qa_subset.json`` for a calibration run; ``--api``
also imports the file through the service (``POST /banks/imports`` on a fresh bank: the request,
which reads every row, and the ``import`` job it queues, run here as a worker would) and times both.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.queued_runner import QueuedRunner
from itemsmith.handlers.synthetic import GENERATORS
from itemsmith.templates_bank.releases import ReleaseCreate, create_release
from itemsmith.templates_bank.static_items import audit_release, audit_table, import_items
from itemsmith.templates_bank.storage import open_session, upgrade

TREND = {"up": "upward trend", "down": "downward trend", "none": "no clear trend"}
SEASON = {"none": "no seasonality", "fixed": "a fixed seasonal cycle", "varying_amplitude":
          "a seasonal cycle of varying amplitude", "shifting": "a shifting seasonal cycle"}
ANOMALY = {"none": "no anomaly", "spike": "a spike", "level_shift": "a level shift", "dropout": "a dropout"}
STATIONARY = {"stationary": "stationary", "random_walk": "a random walk", "trend_stationary": "trend-stationary"}
VOLATILITY = {"constant": "constant volatility", "increasing": "increasing volatility",
              "clustered": "volatility clustering", "leverage": "a leverage effect"}
GRANGER = {"x->y": "series 1 drives series 2", "y->x": "series 2 drives series 1", "none": "neither drives the other"}
CORRELATION = {"positive": "positively correlated", "negative": "negatively correlated", "none": "uncorrelated"}

# (category, subcategory, generator, kinds -> option text, question, concepts, difficulty)
FAMILIES: list[tuple[str, str, str, dict[str, str], str, list[str], str]] = [
    ("Pattern Recognition", "trend", "trend", TREND, "Which trend does the time series show?", ["trend"], "easy"),
    ("Pattern Recognition", "seasonality", "seasonality", SEASON, "What seasonal behaviour does the time series "
     "show?", ["seasonality"], "medium"),
    ("Anomaly Detection", "anomaly type", "anomaly", ANOMALY, "Which anomaly, if any, does the time series contain?",
     ["anomaly"], "medium"),
    ("Noise Understanding", "stationarity", "stationarity", STATIONARY, "Which best describes the time series?",
     ["stationarity", "random walk"], "hard"),
    ("Noise Understanding", "volatility", "volatility", VOLATILITY, "How does the volatility of the series behave?",
     ["volatility"], "hard"),
    ("Causality Analysis", "Granger causality", "granger_pair", GRANGER, "Which statement about the two series "
     "holds?", ["granger causality"], "hard"),
    ("Similarity Analysis", "correlation", "correlated_pair", CORRELATION, "How are the two time series related?",
     ["correlation"], "medium"),
]


def _series(generator: str, kind: str, rng: np.random.Generator, length: int) -> tuple[dict[str, Any], dict]:
    if generator == "granger_pair":
        synthetic = GENERATORS[generator](rng, length=length, direction=kind)
    else:
        synthetic = GENERATORS[generator](rng, length=length, kind=kind)
    values = np.round(np.asarray(synthetic.values, dtype=float), 3)
    if values.ndim == 2:
        return {"ts1": values[:, 0].tolist(), "ts2": values[:, 1].tolist()}, synthetic.labels
    return {"ts": values.tolist()}, synthetic.labels


def build(templates: int, per_template: int, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    balanced: list[int] = []
    for tid in range(templates):
        category, subcategory, generator, texts, question, concepts, difficulty = FAMILIES[tid % len(FAMILIES)]
        kinds = list(texts)
        n_options = min(4, len(kinds))
        schedule = None
        if tid % 3:  # planted: keys balanced over positions within the template (every third one is random)
            balanced.append(tid)
            schedule = [int(p) for p in rng.permutation(np.resize(np.arange(n_options), per_template))]
        binary = tid % 7 == 6  # a few binary templates: "is the key statement true?"
        for i in range(per_template):
            kind = kinds[int(rng.integers(len(kinds)))]
            series, labels = _series(generator, kind, rng, length=int(rng.integers(200, 260)))
            if binary:
                claim = kinds[int(rng.integers(len(kinds)))]
                options, answer = ["Yes", "No"], "Yes" if claim == kind else "No"
                text, qtype = f"Does the time series show {texts[claim]}?", "binary"
            else:
                others = [k for k in kinds if k != kind]
                picked = [kind, *[others[j] for j in rng.permutation(len(others))[: n_options - 1]]]
                order = list(rng.permutation(n_options))
                if schedule is not None:  # put the key at the scheduled position
                    order.remove(0)
                    order.insert(schedule[i], 0)
                options = [texts[picked[j]] for j in order]
                answer, text, qtype = texts[kind], question, ("multiple_choice" if tid % 2 else "multiple-choice")
            rows.append({"question": text, "options": options, "answer": answer, "question_type": qtype, **series,
                         "tid": tid, "category": category, "subcategory": subcategory, "difficulty": difficulty,
                         "relevant_concepts": concepts, "label": labels.get("kind")})
    anomaly = [i for i, r in enumerate(rows) if r["category"] == "Anomaly Detection"]
    duplicated = 0
    for source in anomaly[::2][:31]:  # planted: 31 exact copies, each right after its original's template
        copy = dict(rows[source])
        rows.append(copy)
        duplicated += 1
    rows.sort(key=lambda r: r["tid"])  # the copies join their template
    return rows, {"balanced_templates": balanced, "duplicates": duplicated}


def over_the_api(path: Path, out: Path) -> None:
    """POST the file to a fresh service and run the import job it queues; both timed."""
    from fastapi.testclient import TestClient

    from itemsmith.api.app import create_app
    from itemsmith.api.settings import ApiSettings
    from itemsmith.service.auth import create_key
    from itemsmith.service.jobs import execute_job, get_job, upgrade_database

    url = f"sqlite:///{out / 'service.sqlite'}"
    upgrade_database(url)
    settings = ApiSettings(database_url=url, uploads_dir=out / "uploads")
    with open_session(url) as session:
        key, _ = create_key(session, "bench")
    app = create_app(settings)
    app.state.job_runner = QueuedRunner()
    with TestClient(app) as client:
        started = time.perf_counter()
        response = client.post("/banks/imports", data={"name": "tse", "format": "tse"}, headers={"X-API-Key": key},
                               files={"file": (path.name, path.read_bytes(), "application/json")})
        requested = time.perf_counter() - started
    assert response.status_code == 202, response.text
    job_id = response.json()["job"]["id"]
    started = time.perf_counter()
    status = execute_job(app.state.engine, job_id, worker="bench", settings=settings)
    ran = time.perf_counter() - started
    with open_session(url) as session:
        result = get_job(session, job_id).result or {}
    print(f"over the API: POST /banks/imports ({path.stat().st_size / 2**20:.1f} MiB) answered 202 in "
          f"{requested:.2f} s; the import job {status} in {ran:.2f} s ({result.get('new_versions')} new versions)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=int, default=105)
    parser.add_argument("--per-template", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="folder for the files (default: a temporary one)")
    parser.add_argument("--subset", type=int, default=0, help="also write the first N items (whole templates)")
    parser.add_argument("--json", type=Path, default=None, help="write the audit report (JSON) here")
    parser.add_argument("--api", action="store_true", help="also import the file through the service, timed")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tse-import-"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows, planted = build(args.templates, args.per_template)
    path = out / "qa_dataset.json"
    path.write_text(json.dumps(rows))
    print(f"built {len(rows)} items in {args.templates} templates ({time.perf_counter() - started:.1f} s): {path}")
    print(f"planted: balanced keys in {len(planted['balanced_templates'])} templates, {planted['duplicates']} "
          "exact duplicate questions in Anomaly Detection")
    if args.subset:
        tids = sorted({r["tid"] for r in rows})
        subset, taken = [], 0
        for tid in tids:
            group = [r for r in rows if r["tid"] == tid]
            if taken + len(group) > args.subset and subset:
                break
            subset += group
            taken += len(group)
        (out / "qa_subset.json").write_text(json.dumps(subset))
        print(f"subset: {len(subset)} items -> {out / 'qa_subset.json'}")

    url = f"sqlite:///{out / 'bank.sqlite'}"
    upgrade(url)
    for attempt in ("first import", "second import"):
        started = time.perf_counter()
        with open_session(url) as session:
            report, _ = import_items(session, "tse", str(path), "tse", owner="bench", created_by="bench")
        print(f"{attempt}: {report.rows} rows, {report.groups} groups, {report.new_versions} new versions, "
              f"{report.unchanged_versions} unchanged, {time.perf_counter() - started:.2f} s")
    with open_session(url) as session:
        release = create_release(session, ReleaseCreate(bank="tse", created_by="bench"))
    started = time.perf_counter()
    audit = audit_release(release)
    elapsed = time.perf_counter() - started
    print(f"release audit of {release.manifest.ref}: {elapsed:.2f} s\n")
    print(audit_table(audit))
    flagged = {g.group for g in audit.groups if "least_keyed" in g.report.shortcuts}
    planted_keys = {f"tse-{t}" for t in planted["balanced_templates"]}
    print(f"\nleast_keyed shortcut per group: {len(flagged & planted_keys)} of {len(planted_keys)} balanced templates, "
          f"{len(flagged - planted_keys)} of {args.templates - len(planted_keys)} others")
    in_scope = [c.scope for c in [*audit.categories, audit.overall] if "least_keyed" in c.shortcuts]
    print(f"least_keyed shortcut pooled: {', '.join(in_scope) or 'nowhere'}")
    duplicates = {g.group for g in audit.groups if "duplicate_items" in g.report.failed_checks}
    print(f"duplicate_items: {audit.overall.duplicates} items flagged (planted {planted['duplicates']}) in "
          f"{len(duplicates)} groups")
    if args.json:
        args.json.write_text(audit.model_dump_json(indent=1))
    if args.api:
        over_the_api(path, out)


if __name__ == "__main__":
    main()
