"""The ``reverify`` and ``evaluate`` jobs on a small release, with scripted judge and model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import execute_job, get_job
from itemsmith.service.jobs._store import create_job, list_events
from itemsmith.templates_bank.releases import ReleaseCreate, create_release
from itemsmith.templates_bank.storage import BankCreate, create_bank, import_curated, list_verdicts, open_session

from .conftest import OWNER


def _script(path: Path, reply: str) -> str:
    path.write_text(json.dumps({"replies": [reply]}))
    return f"scripted:{path}"


def _run(engine: Engine, settings: ApiSettings, kind: str, request: dict, bank_id: int) -> dict:
    with open_session(engine) as session:
        job_id = create_job(session, kind=kind, owner=OWNER, request=request, bank_id=bank_id).id
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
    with open_session(engine) as session:
        job = get_job(session, job_id)
    return {"id": job_id, **job.result}


@pytest.mark.slow
def test_scripted_reverify_and_evaluate_jobs_on_a_release(engine: Engine, api_settings: ApiSettings,
                                                          tmp_path: Path) -> None:
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="released", handler="synthetic", owner=OWNER))
        version = import_curated(session, bank.id, reviewer="curator", template_ids=["exam_trend_direction"])[0]
        create_release(session, ReleaseCreate(bank="released", seeds=[0], num_samples=2, created_by="curator"))
    judge = _script(tmp_path / "judge.json", "Clear and answerable from the series.\nScore: 8")
    reverified = _run(engine, api_settings, "reverify",
                      {"bank": "released", "release": 1, "judges": [judge]}, bank.id)
    assert reverified["run_id"] == reverified["id"] and reverified["judges"] == [judge]
    assert [t["new_decision"]["accepted"] for t in reverified["templates"]] == [True]
    with open_session(engine) as session:
        scores = [v for v in list_verdicts(session, version.id, "judge") if v.run_id == reverified["id"]]
    assert scores and all(v.record.score == 8 for v in scores)

    model = _script(tmp_path / "student.json", "Answer: A")
    evaluated = _run(engine, api_settings, "evaluate",
                     {"bank": "released", "release": 1, "model": model, "formats": ["plain"]}, bank.id)
    assert evaluated["overall"]["n"] == 2 and 0 <= evaluated["overall"]["accuracy"] <= 1
    with open_session(engine) as session:
        progress = [e.payload for e in list_events(session, evaluated["id"], kind="progress")]
        summary = get_job(session, evaluated["id"]).progress
    assert progress == [{"answered": 1, "items": 2}, {"answered": 2, "items": 2}] and summary == progress[-1]
